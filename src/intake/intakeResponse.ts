/**
 * What the intake answers, as a plain value: stored with the idempotency record and replayed to
 * the byte, so a client that retries sees the same status, headers and body as the first time.
 */
export interface IntakeResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** Stripe's and the IETF draft's name for "this answer was stored, not computed now". */
export const replayedHeader = 'Idempotent-Replayed';

/** Problem types (RFC 9457) the intake returns: each names what is wrong, a client can branch on it. */
export type ProblemCode =
  | 'idempotency-key-missing'
  | 'idempotency-key-malformed'
  | 'unsupported-media-type'
  | 'body-too-large'
  | 'body-not-json'
  | 'invalid-order'
  | 'idempotency-key-reused'
  | 'request-in-progress'
  | 'order-exists'
  | 'store-unavailable'
  | 'caller-unauthenticated';

export const problemTypeBase = 'urn:idempotent-order-consumer:problem:';

export function problem(
  status: number,
  code: ProblemCode,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): IntakeResponse {
  return {
    status,
    headers: { 'Content-Type': 'application/problem+json', ...headers },
    body: { type: `${problemTypeBase}${code}`, title, status, detail, ...extra },
  };
}

export function accepted(orderId: string, messageId: string, acceptedAt: string): IntakeResponse {
  return {
    status: 202,
    headers: { 'Content-Type': 'application/json' },
    body: { orderId, status: 'accepted', messageId, acceptedAt },
  };
}

/** The stored answer, marked as a replay. */
export function replayed(response: IntakeResponse): IntakeResponse {
  return { ...response, headers: { ...response.headers, [replayedHeader]: 'true' } };
}
