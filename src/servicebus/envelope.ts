import { PermanentMessageError } from '../idempotency/index.js';

/**
 * What the Functions host tells a Service Bus–triggered function about one delivery, in the shape
 * it really arrives (research/README.md section 2): keys camelCased recursively (an application
 * property `TenantId` arrives as `tenantId`), nulls absent, integers as numbers, times as ISO strings.
 */
export interface MessageEnvelope {
  readonly messageId?: string;
  readonly correlationId?: string;
  readonly contentType?: string;
  readonly subject?: string;
  readonly deliveryCount?: number;
  readonly sequenceNumber?: number;
  readonly enqueuedTimeUtc?: string;
  readonly applicationProperties: Readonly<Record<string, unknown>>;
  /**
   * The invocation's W3C trace context (`context.traceContext.traceParent`), not the message's:
   * the events this delivery causes carry it on, so one order is one trace across every hop.
   */
  readonly traceparent?: string;
}

/** What a Service Bus–triggered function knows of its delivery: the host's metadata and the invocation's trace context. */
export function envelopeFromInvocation(context: { readonly triggerMetadata?: Readonly<Record<string, unknown>>; readonly traceContext?: { readonly traceParent?: string | null } }): MessageEnvelope {
  const traceparent = context.traceContext?.traceParent ?? undefined;
  return { ...envelopeFromTriggerMetadata(context.triggerMetadata), ...(traceparent ? { traceparent } : {}) };
}

export function envelopeFromTriggerMetadata(metadata: Readonly<Record<string, unknown>> | undefined): MessageEnvelope {
  const m = metadata ?? {};
  return {
    messageId: text(m.messageId),
    correlationId: text(m.correlationId),
    contentType: text(m.contentType),
    subject: text(m.subject) ?? text(m.label),
    deliveryCount: integer(m.deliveryCount),
    sequenceNumber: integer(m.sequenceNumber),
    enqueuedTimeUtc: text(m.enqueuedTimeUtc),
    applicationProperties: record(m.applicationProperties) ?? record(m.userProperties) ?? {},
  };
}

/** The fields only the broker writes, by lower-cased name: the app trusts them because no sender can set them. */
const brokerOwnFields = new Map<string, 'deliveryCount' | 'sequenceNumber'>([
  ['deliverycount', 'deliveryCount'],
  ['sequencenumber', 'sequenceNumber'],
]);

/**
 * The envelope without the broker's own fields that the body may have written over. The Functions
 * host copies each top-level property of a JSON object body into the trigger metadata, over the
 * broker's field of the same name, case ignored (azure-functions-host Utility.ApplyBindingData): a
 * body `{"sequenceNumber": 7}` arrives as sequenceNumber "7", a sender's number, not the broker's.
 * Such a body reaches the handler as that object, so its own names say which fields may be the
 * sender's: those are unknown, as when the broker sends none (a first delivery, nothing to recall).
 */
export function withoutFieldsTheBodyMayHaveWritten(envelope: MessageEnvelope, body: unknown): MessageEnvelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || ArrayBuffer.isView(body)) return envelope;
  let trusted = envelope;
  for (const name in body) {
    const field = brokerOwnFields.get(name.toLowerCase());
    if (field !== undefined && Object.hasOwn(body, name)) trusted = { ...trusted, [field]: undefined };
  }
  return trusted;
}

/**
 * Refuses a message carrying two application properties whose names differ only by case (the
 * host lower-cases the first letter, so `Idempotency-Key` and `idempotency-key` arrive as
 * `idempotency-Key` and `idempotency-key`): `applicationProperty` would read whichever came first,
 * so the sender, not the app, would choose which one counts.
 */
export function refuseAmbiguousPropertyNames(envelope: MessageEnvelope): void {
  const seen = new Map<string, string>();
  for (const name of Object.keys(envelope.applicationProperties)) {
    const other = seen.get(name.toLowerCase());
    if (other !== undefined) {
      throw new PermanentMessageError('AmbiguousProperty', `the application properties ${JSON.stringify(other)} and ${JSON.stringify(name)} differ only by case; send one of them`);
    }
    seen.set(name.toLowerCase(), name);
  }
}

/**
 * Reads an application property whatever the case of its first letter (the host lower-cases it)
 * or of the rest (producers write `Idempotency-Key` as often as `idempotency-key`).
 */
export function applicationProperty(envelope: MessageEnvelope, name: string): unknown {
  const wanted = name.toLowerCase();
  const key = Object.keys(envelope.applicationProperties).find((k) => k.toLowerCase() === wanted);
  return key === undefined ? undefined : envelope.applicationProperties[key];
}

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return undefined;
}

function integer(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
