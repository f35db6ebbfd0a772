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

/**
 * What a Service Bus–triggered function knows of its delivery: the host's metadata and the
 * invocation's trace context. `body` is the message as the handler was given it: the fields it may
 * have written over are not taken for the broker's (envelopeFromTriggerMetadata).
 */
export function envelopeFromInvocation(
  context: { readonly triggerMetadata?: Readonly<Record<string, unknown>>; readonly traceContext?: { readonly traceParent?: string | null } },
  body?: unknown,
): MessageEnvelope {
  const traceparent = context.traceContext?.traceParent ?? undefined;
  return { ...envelopeFromTriggerMetadata(context.triggerMetadata, body), ...(traceparent ? { traceparent } : {}) };
}

/**
 * The envelope from the trigger metadata. The host writes each top-level property of a JSON object
 * body over the field of the same name, case ignored (azure-functions-host Utility.ApplyBindingData),
 * so with the body at hand a field it names is read from the host's back-compat copy when that one is
 * intact (`label` for `subject`, `userProperties` for `applicationProperties`), or not at all: a
 * delivery count or sequence number the body names is unknown, never the sender's number. The
 * MessageId, correlation id and content type are the sender's either way.
 */
export function envelopeFromTriggerMetadata(metadata: Readonly<Record<string, unknown>> | undefined, body?: unknown): MessageEnvelope {
  const m = metadata ?? {};
  const written = brokerFieldsTheBodyNames(body);
  const broker = (name: string, copy?: string): unknown => {
    if (!written.has(hostFolded(name))) return m[name];
    return copy !== undefined && !written.has(hostFolded(copy)) ? m[copy] : undefined;
  };
  return {
    messageId: text(m.messageId),
    correlationId: text(m.correlationId),
    contentType: text(m.contentType),
    subject: text(broker('subject', 'label')) ?? text(broker('label')),
    deliveryCount: integer(broker('deliveryCount')),
    sequenceNumber: integer(broker('sequenceNumber')),
    enqueuedTimeUtc: text(broker('enqueuedTimeUtc')),
    applicationProperties: record(broker('applicationProperties', 'userProperties')) ?? record(broker('userProperties')) ?? {},
  };
}

/**
 * A name as the host compares it: its binding data is an OrdinalIgnoreCase dictionary, which compares
 * characters upper-cased, so `ſequenceNumber` (a long s, whose upper case is S) is SequenceNumber
 * there. JavaScript's upper case maps at least those characters the same way.
 */
function hostFolded(name: string): string {
  return name.toUpperCase();
}

/** The metadata names the envelope reads, as hostFolded gives them: the only ones a body's names are checked against. */
const readFieldNames: ReadonlySet<string> = new Set([
  'SUBJECT',
  'LABEL',
  'DELIVERYCOUNT',
  'SEQUENCENUMBER',
  'ENQUEUEDTIMEUTC',
  'APPLICATIONPROPERTIES',
  'USERPROPERTIES',
]);

/** The fields the app trusts as the broker's alone: what it reads first by, and what it recalls a rejection by. */
const trustedBrokerFields: ReadonlySet<string> = new Set(['DELIVERYCOUNT', 'SEQUENCENUMBER']);

/**
 * The metadata fields a body may have written over, as hostFolded gives them: its own top-level
 * names, when the handler was given it as an object (the host reads only a JSON object body this
 * way). Only names the envelope reads are kept, so a body with many properties costs a walk and no copy. A body given as
 * text or bytes that still looks like an object may have been read by the host, whose parser
 * (Newtonsoft) takes what JSON.parse refuses (single quotes, bare names, comments): its names are
 * unknown here, so the trusted fields count as written (it is refused as not JSON anyway).
 */
function brokerFieldsTheBodyNames(body: unknown): ReadonlySet<string> {
  const names = new Set<string>();
  if (typeof body === 'string' || body instanceof Uint8Array) return looksLikeAnObject(body) ? trustedBrokerFields : names;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || ArrayBuffer.isView(body)) return names;
  for (const name in body) {
    const folded = hostFolded(name);
    if (readFieldNames.has(folded) && Object.hasOwn(body, name)) names.add(folded);
  }
  return names;
}

/**
 * Whether the host could take the text for a JSON object: `{` first and `}` last once white space is
 * trimmed. Anything not plain ASCII counts as white space here, so a look is never narrower than the
 * host's trim, and costs no decoding.
 */
function looksLikeAnObject(body: string | Uint8Array): boolean {
  const codeAt = typeof body === 'string' ? (i: number) => body.charCodeAt(i) : (i: number) => body[i] ?? 0;
  const blank = (code: number) => code <= 0x20 || code >= 0x7f;
  let first = 0;
  while (first < body.length && blank(codeAt(first))) first += 1;
  let last = body.length - 1;
  while (last > first && blank(codeAt(last))) last -= 1;
  return last > first && codeAt(first) === 0x7b && codeAt(last) === 0x7d;
}

/**
 * The envelope without a delivery count or sequence number the body names: for a caller that built
 * the envelope without the body (envelopeFromTriggerMetadata above does this itself). The consumer
 * trusts both as the broker's: what it reads first, and which rejection it recalls.
 */
export function withoutFieldsTheBodyMayHaveWritten(envelope: MessageEnvelope, body: unknown): MessageEnvelope {
  const written = brokerFieldsTheBodyNames(body);
  if (!written.has('DELIVERYCOUNT') && !written.has('SEQUENCENUMBER')) return envelope;
  return {
    ...envelope,
    ...(written.has('DELIVERYCOUNT') ? { deliveryCount: undefined } : {}),
    ...(written.has('SEQUENCENUMBER') ? { sequenceNumber: undefined } : {}),
  };
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
      throw new PermanentMessageError(
        'AmbiguousProperty',
        `the application properties ${JSON.stringify(other)} and ${JSON.stringify(name)} differ only by case; send one of them`,
      );
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
