/**
 * The story of one key, as pure functions: each stored document and each broker message becomes
 * one or more dated events; the commands gather them (traceCommand.ts).
 */

export interface TraceEvent {
  readonly at: string;
  /** Where it is held: `cosmos <docType>`, `orders (live)`, `orders/$deadletterqueue`, `operator-action`. */
  readonly where: string;
  readonly what: string;
  readonly id: string;
  readonly detail: string;
}

/** What the tool reads of a peeked message: no body walk beyond its top-level `orderId`. */
export interface PeekedMessageView {
  readonly messageId?: string;
  readonly sequenceNumber?: string;
  readonly subject?: string;
  readonly sessionId?: string;
  readonly state?: string;
  readonly enqueuedTimeUtc?: Date;
  readonly scheduledEnqueueTimeUtc?: Date;
  readonly deadLetterReason?: string;
  readonly deadLetterErrorDescription?: string;
  readonly applicationProperties?: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
}

export interface TraceSubject {
  /** What the operator typed: an idempotency key, a MessageId or an order id. */
  readonly input: string;
  readonly orderId?: string;
}

const traceparentPattern = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
const summaryFields = [
  'state',
  'status',
  'messageType',
  'eventType',
  'reason',
  'idempotencyKey',
  'dedupKey',
  'messageId',
  'consumerName',
  'fingerprint',
  'amountPaid',
  'shipmentId',
  'kind',
  'command',
] as const;
const maxDetailChars = 300;

/** The body's top-level `orderId`, when the body is an object that has one: nothing deeper is read. */
export function orderIdOfBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || body instanceof Uint8Array) return undefined;
  const orderId = (body as Record<string, unknown>).orderId;
  return typeof orderId === 'string' ? orderId : undefined;
}

/** A message belongs to the story when it carries the key (as MessageId, a copy's MessageId, or `idempotency-key`) or the order. */
export function messageConcerns(m: PeekedMessageView, subject: TraceSubject): boolean {
  const key = m.applicationProperties?.['idempotency-key'];
  const ids = [m.messageId, typeof key === 'string' ? key : undefined];
  if (ids.some((id) => id !== undefined && (id === subject.input || id.startsWith(`${subject.input}~`)))) return true;
  if (subject.orderId === undefined) return false;
  return m.sessionId === subject.orderId || orderIdOfBody(m.body) === subject.orderId;
}

export function messageEvent(m: PeekedMessageView, where: string): TraceEvent {
  const at = m.state === 'scheduled' && m.scheduledEnqueueTimeUtc ? m.scheduledEnqueueTimeUtc : m.enqueuedTimeUtc;
  const key = m.applicationProperties?.['idempotency-key'];
  const parts = [
    m.subject,
    typeof key === 'string' ? `idempotency-key ${key}` : undefined,
    m.deadLetterReason ? `${m.deadLetterReason}: ${m.deadLetterErrorDescription ?? ''}` : undefined,
    m.sequenceNumber === undefined ? undefined : `#${m.sequenceNumber}`,
  ];
  return {
    at: iso(at),
    where,
    what: m.state === 'scheduled' ? 'scheduled message' : where.endsWith('$deadletterqueue') ? 'dead-lettered message' : 'message waiting',
    id: m.messageId ?? '',
    detail: clip(parts.filter(Boolean).join('; ')),
  };
}

/** A stored document's events: its creation, and the later instants it records (published, answered, applied...). */
export function documentEvents(doc: Readonly<Record<string, unknown>>): TraceEvent[] {
  const docType = typeof doc.docType === 'string' ? doc.docType : 'document';
  const id = typeof doc.id === 'string' ? doc.id : '';
  const where = docType === 'operator-action' ? 'operator-action' : `cosmos ${docType}`;
  const first = firstTime(doc, ['createdAt', 'acceptedAt', 'placedAt', 'processedAt', 'parkedAt', 'detectedAt', 'rejectedAt', 'changedAt', 'at', 'updatedAt']);
  const events: TraceEvent[] = [
    { at: first ?? '', where, what: docType === 'operator-action' ? `operator ran ${String(doc.command)}` : `${docType} written`, id, detail: summaryOf(doc) },
  ];
  const later: [string, unknown][] = [
    ['published', doc.publishedAt],
    ['answered', doc.completedAt],
    ['status changed', doc.statusChangedAt],
    ['shipment booked', doc.shipmentBookedAt],
    ['applied', doc.appliedAt],
    ['rejected', (doc.rejection as { rejectedAt?: unknown } | undefined)?.rejectedAt],
    ['claimed by a resubmit', (doc.resubmitClaim as { claimedAt?: unknown } | undefined)?.claimedAt],
    ['escalated', (doc.escalation as { at?: unknown } | undefined)?.at],
    ['finished', doc.finishedAt],
  ];
  for (const [what, at] of later)
    if (typeof at === 'string' && at !== first)
      events.push({
        at,
        where,
        what: `${docType} ${what}`,
        id,
        detail: what === 'answered' ? clip(JSON.stringify((doc.response as { status?: unknown } | undefined)?.status ?? '')) : '',
      });
  return events;
}

/** W3C trace ids found in traceparent values (`Diagnostic-Id`, `traceparent`): what to search for in Application Insights. */
export function traceIdsOf(values: readonly unknown[]): string[] {
  const ids = values.flatMap((v) => {
    const match = typeof v === 'string' ? traceparentPattern.exec(v.trim().toLowerCase()) : null;
    return match?.[1] ? [match[1]] : [];
  });
  return [...new Set(ids)];
}

/** The traceparent-like values a document or message holds at the places the app puts them. */
export function traceparentsOf(source: Readonly<Record<string, unknown>>): unknown[] {
  const props = (source.applicationProperties ?? (source.message as { applicationProperties?: unknown } | undefined)?.applicationProperties) as
    Record<string, unknown> | undefined;
  return [source.traceparent, props?.['Diagnostic-Id'], props?.traceparent];
}

export function timeline(events: readonly TraceEvent[]): TraceEvent[] {
  return [...events].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.where < b.where ? -1 : a.where > b.where ? 1 : 0));
}

function summaryOf(doc: Readonly<Record<string, unknown>>): string {
  const parts = summaryFields.flatMap((f) => {
    const v = doc[f];
    return typeof v === 'string' || typeof v === 'number' ? [`${f} ${String(v)}`] : [];
  });
  const targets = Array.isArray(doc.targets) ? [`targets ${doc.targets.filter((t) => typeof t === 'string').join(' ')}`] : [];
  return clip([...parts, ...targets].join('; '));
}

function firstTime(doc: Readonly<Record<string, unknown>>, fields: readonly string[]): string | undefined {
  for (const f of fields) if (typeof doc[f] === 'string') return doc[f] as string;
  return undefined;
}

function iso(at: Date | undefined): string {
  return at === undefined || Number.isNaN(at.getTime()) ? '' : at.toISOString();
}

function clip(text: string): string {
  return text.length > maxDetailChars ? `${text.slice(0, maxDetailChars - 1)}…` : text;
}
