import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import canonicalize from 'canonicalize';
import { parseIdempotencyKey } from '../../src/http/idempotencyKeyHeader.js';

/**
 * A carrier's booking API, as a third party that takes idempotency seriously offers it (the IETF
 * httpapi Idempotency-Key draft, and Stripe's practice before it):
 * - `POST /shipments` with `Idempotency-Key` (an sf-string) books once per key: the same key and
 *   payload again gets the stored response replayed (`Idempotent-Replayed: true`); the same key
 *   with another payload, 422; the same key while the first request is still being handled, 409;
 *   no key or a malformed one, 400;
 * - `GET /shipments?idempotencyKey=<key>` answers what became of a key: 200 with the answer it
 *   gave (`{ idempotencyKey, status, body }`), 409 while it is in flight, 404 when nothing was
 *   booked under it (what a reconciler asks);
 * - `Authorization: Bearer <api key>` on every call, 401 otherwise;
 * - with `keepErrorAnswers`, a 5xx or 429 is kept under its key and replayed like any answer.
 * Faults are injected per call (see CarrierFault); counts are kept for the tests and the demo.
 */
export interface CarrierStandIn {
  readonly url: string;
  readonly apiKey: string;
  /** Applies to the next matching booking requests, in the order injected. */
  inject(fault: CarrierFault): void;
  clearFaults(): void;
  /** Bookings made (one per key); a replay is not a booking. */
  bookings(): readonly CarrierBooking[];
  stats(): CarrierStats;
  close(): Promise<void>;
}

export type CarrierFault =
  /** Books, then drops the connection before answering: the client sees a failure after a success. */
  | { readonly kind: 'drop-after-booking'; readonly times?: number }
  /** 503 before anything is booked. */
  | { readonly kind: 'unavailable'; readonly times?: number }
  /** Holds the request, in flight under its key, until `until` settles; then books and answers (a test sets the interleaving). */
  | { readonly kind: 'hold'; readonly until: Promise<void>; readonly times?: number }
  /** Holds the request this long before it books and answers (longer than the client's timeout, say). */
  | { readonly kind: 'slow'; readonly delayMs: number; readonly times?: number }
  /** 429 with Retry-After, nothing booked. */
  | { readonly kind: 'throttle'; readonly retryAfterSeconds: number; readonly times?: number }
  /** A 4xx the carrier means: it will not book this shipment (an address it does not serve, say). */
  | { readonly kind: 'refuse'; readonly status?: number; readonly title?: string; readonly times?: number };

export interface CarrierBooking {
  readonly shipmentId: string;
  readonly idempotencyKey: string;
  readonly orderReference: string;
  readonly traceparent?: string;
  readonly bookedAt: string;
}

export interface CarrierStats {
  readonly bookings: number;
  readonly requests: number;
  readonly replays: number;
  readonly lookups: number;
  readonly faultsInjected: number;
}

export interface CarrierStandInOptions {
  readonly port?: number;
  readonly apiKey?: string;
  /**
   * Keep a 5xx or 429 answer under its key, as Stripe keeps error responses: the same key gets it
   * replayed, and the look-up returns it as the stored answer. Off by default (nothing is kept
   * for an answer that booked nothing, as the IETF draft allows).
   */
  readonly keepErrorAnswers?: boolean;
}

type KeyState =
  | { readonly state: 'in-flight'; readonly fingerprint: string }
  | { readonly state: 'completed'; readonly fingerprint: string; readonly status: number; readonly body: unknown };

const maxBodyBytes = 64 * 1024;

export async function startCarrierStandIn(options: CarrierStandInOptions = {}): Promise<CarrierStandIn> {
  const apiKey = options.apiKey ?? `carrier-${randomUUID()}`;
  const keys = new Map<string, KeyState>();
  const bookings: CarrierBooking[] = [];
  const faults: { fault: CarrierFault; left: number }[] = [];
  const counts = { requests: 0, replays: 0, lookups: 0, faultsInjected: 0 };

  const nextFault = (): CarrierFault | undefined => {
    const entry = faults[0];
    if (!entry) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) faults.shift();
    counts.faultsInjected += 1;
    return entry.fault;
  };

  const book = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    counts.requests += 1;
    const rawKey = req.headers['idempotency-key'];
    const key = parseIdempotencyKey(Array.isArray(rawKey) ? undefined : rawKey);
    if (key === undefined) {
      return problem(res, 400, rawKey === undefined ? 'Idempotency-Key is missing' : 'Idempotency-Key is not a Structured Field string (a quoted string)');
    }
    const body = await readJson(req);
    if (!body.ok) return problem(res, body.status, body.title);
    const request = body.value as { orderReference?: unknown };
    if (typeof request.orderReference !== 'string' || request.orderReference === '') return problem(res, 400, 'orderReference is required');
    const fingerprint = createHash('sha256')
      .update(canonicalize(body.value) ?? '')
      .digest('hex');
    const known = keys.get(key);
    if (known && known.fingerprint !== fingerprint) return problem(res, 422, 'Idempotency-Key was used with another payload');
    if (known?.state === 'in-flight') return problem(res, 409, 'a request with this Idempotency-Key is still being handled', { 'Retry-After': '1' });
    if (known?.state === 'completed') {
      counts.replays += 1;
      return send(res, known.status, known.body, { 'Idempotent-Replayed': 'true' });
    }
    const fault = nextFault();
    const transient = (status: number, title: string, headers: Record<string, string> = {}): void => {
      if (options.keepErrorAnswers) keys.set(key, { state: 'completed', fingerprint, status, body: problemBody(status, title) });
      problem(res, status, title, headers);
    };
    if (fault?.kind === 'unavailable') return transient(503, 'the carrier is unavailable; nothing was booked');
    if (fault?.kind === 'throttle') return transient(429, 'too many requests; nothing was booked', { 'Retry-After': String(fault.retryAfterSeconds) });
    if (fault?.kind === 'refuse') {
      const status = fault.status ?? 400;
      const title = fault.title ?? 'the carrier does not serve this shipment';
      // A refusal is an answer too: the same key gets it again.
      keys.set(key, { state: 'completed', fingerprint, status, body: problemBody(status, title) });
      return problem(res, status, title);
    }
    keys.set(key, { state: 'in-flight', fingerprint });
    if (fault?.kind === 'slow') await sleep(fault.delayMs);
    if (fault?.kind === 'hold') await fault.until;
    const booking: CarrierBooking = {
      shipmentId: `SHP-${randomUUID().slice(0, 8).toUpperCase()}`,
      idempotencyKey: key,
      orderReference: request.orderReference,
      traceparent: typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined,
      bookedAt: new Date().toISOString(),
    };
    bookings.push(booking);
    const answer = { shipmentId: booking.shipmentId, status: 'booked', orderReference: booking.orderReference, bookedAt: booking.bookedAt };
    keys.set(key, { state: 'completed', fingerprint, status: 201, body: answer });
    if (fault?.kind === 'drop-after-booking') {
      req.socket.destroy();
      return;
    }
    send(res, 201, answer);
  };

  const lookup = (url: URL, res: ServerResponse): void => {
    counts.lookups += 1;
    const key = url.searchParams.get('idempotencyKey');
    if (!key) return problem(res, 400, 'idempotencyKey is required');
    const known = keys.get(key);
    if (!known) return problem(res, 404, 'nothing was booked under this Idempotency-Key');
    if (known.state === 'in-flight') return problem(res, 409, 'a request with this Idempotency-Key is still being handled', { 'Retry-After': '1' });
    // The stored answer wrapped, so a refusal kept under the key is not mistaken for a refused look-up.
    send(res, 200, { idempotencyKey: key, status: known.status, body: known.body });
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://carrier');
    if (req.headers.authorization !== `Bearer ${apiKey}`) return problem(res, 401, 'a valid API key is required (Authorization: Bearer <key>)');
    if (url.pathname === '/shipments' && req.method === 'POST') {
      book(req, res).catch((error: unknown) => problem(res, 500, String(error)));
      return;
    }
    if (url.pathname === '/shipments' && req.method === 'GET') return lookup(url, res);
    problem(res, url.pathname === '/shipments' ? 405 : 404, `${req.method ?? ''} ${url.pathname} is not part of this API`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    inject: (fault) => faults.push({ fault, left: fault.times ?? 1 }),
    clearFaults: () => void faults.splice(0),
    bookings: () => [...bookings],
    stats: () => ({ bookings: bookings.length, ...counts }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | { ok: false; status: number; title: string }> {
  if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return { ok: false, status: 415, title: 'the body must be application/json' };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) return { ok: false, status: 413, title: `the body is larger than ${maxBodyBytes} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, status: 400, title: 'the body must be a JSON object' };
    return { ok: true, value };
  } catch {
    return { ok: false, status: 400, title: 'the body is not JSON' };
  }
}

function problemBody(status: number, title: string): unknown {
  return { type: 'about:blank', title, status };
}

function problem(res: ServerResponse, status: number, title: string, headers: Record<string, string> = {}): void {
  send(res, status, problemBody(status, title), { 'Content-Type': 'application/problem+json', ...headers });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
