import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ManagementReply } from './management.js';

/** The emulator's shared access keys by name; the connection string it prints uses `local`/`local`. */
export type SharedAccessKeys = Readonly<Record<string, string>>;

export const defaultSharedAccessKeys: SharedAccessKeys = { local: 'local' };

export interface PutTokenRequest {
  /** The audience: `sb://host[:port]/<entity>[/$management|/$DeadLetterQueue…]`. */
  readonly audience: string;
  readonly tokenType: string;
  readonly token: unknown;
}

/**
 * Answers a CBS put-token as Service Bus does: 404 for an audience naming an entity that does not
 * exist (so a client learns at once that a queue is missing, instead of retrying), 401 for a shared
 * access signature that is unsigned, signed with an unknown key, or expired. Entra ID tokens (JWT)
 * cannot be checked here and are accepted.
 */
export function answerPutToken(request: PutTokenRequest, entityExists: (path: string) => boolean, keys: SharedAccessKeys, nowMs = Date.now()): ManagementReply {
  const path = entityOfAudience(request.audience);
  if (request.tokenType === 'servicebus.windows.net:sastoken') {
    const refusal = sasRefusal(String(request.token), keys, nowMs);
    if (refusal) return { status: 401, condition: 'com.microsoft:unauthorized-access', description: refusal };
  }
  if (path !== '' && !entityExists(path)) {
    return { status: 404, condition: 'amqp:not-found', description: `The messaging entity '${request.audience}' could not be found.` };
  }
  return { status: 202, description: 'Accepted' };
}

/** `sb://host/orders/$management` -> `orders`; `orders/$DeadLetterQueue` stays (the emulator knows it as an entity). */
export function entityOfAudience(audience: string): string {
  let path: string;
  try {
    path = decodeURIComponent(new URL(audience).pathname);
  } catch {
    path = audience;
  }
  return path.replace(/^\/+|\/+$/g, '').replace(/\/\$management$/i, '');
}

/** Why a shared access signature is refused (unsigned, an unknown key, a wrong signature, expired); undefined when it is good. */
export function sasRefusal(token: string, keys: SharedAccessKeys, nowMs: number): string | undefined {
  const match = /^SharedAccessSignature (.+)$/.exec(token.trim());
  if (!match) return 'InvalidSignature: the token is not a SharedAccessSignature.';
  const fields = new Map(
    (match[1] ?? '').split('&').map((pair) => {
      const at = pair.indexOf('=');
      return [pair.slice(0, at), pair.slice(at + 1)] as const;
    }),
  );
  const [sr, sig, se, skn] = ['sr', 'sig', 'se', 'skn'].map((k) => fields.get(k));
  if (!sr || !sig || !se || !skn) return 'InvalidSignature: the token lacks sr, sig, se or skn.';
  const key = keys[decodeURIComponent(skn)];
  if (key === undefined) return `InvalidSignature: unknown shared access key name '${decodeURIComponent(skn)}'.`;
  const expected = createHmac('sha256', key).update(`${sr}\n${se}`).digest();
  const given = Buffer.from(decodeURIComponent(sig), 'base64');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'InvalidSignature: the token has an invalid signature.';
  if (Number(se) * 1000 < nowMs) return 'ExpiredToken: the token has expired.';
  return undefined;
}
