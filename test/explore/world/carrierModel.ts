import { never } from './awaitPoints.js';
import type { Actor, AwaitPoints } from './awaitPoints.js';

/**
 * What happens to one carrier call (in the order the carrier is called, bookings and look-ups alike):
 * - `answered`: the carrier does what its contract says and the caller hears it;
 * - `answer-lost`: a booking is applied, then the connection drops (the caller cannot tell whether it booked);
 * - `unavailable`: a 503 the carrier does not keep: nothing booked;
 * - `stored-error`: a 503 the carrier keeps under the key until it forgets the key (Stripe does); a
 *   look-up then answers it as the stored answer. On a look-up: a plain 503;
 * - `refused`: a 422 kept under the key (the carrier will not carry this); on a look-up: `answered`;
 * - `unreachable`: the connection fails before the request reaches the carrier.
 */
export type CarrierFate = 'answered' | 'answer-lost' | 'unavailable' | 'stored-error' | 'refused' | 'unreachable';

/** A booking the carrier made: what "one booking per order" is checked against. */
export interface CarrierBooking {
  readonly key: string;
  readonly orderReference: string;
  readonly shipmentId: string;
  readonly atMs: number;
  /** The actors whose look-ups found this request in flight, before it booked. */
  readonly seenInFlightBy: ReadonlySet<string>;
}

type KeyState =
  | { readonly state: 'in-flight'; readonly fingerprint: string; readonly complete: () => void; readonly seenBy: Set<string> }
  | { readonly state: 'kept'; readonly fingerprint: string; readonly status: number; readonly body: unknown; readonly atMs: number };

export interface CarrierModelOptions {
  readonly fates: readonly CarrierFate[];
  /** How long the carrier remembers a key (and its answer) once it answered under it. */
  readonly keyRetentionMs: number;
}

/**
 * The carrier behind `Idempotency-Key` (the contract emulators/carrier-emulator/carrierStandIn.ts stands in for),
 * as the `fetch` the real HttpCarrierClient calls, so the client's own mapping of statuses (a kept
 * 503 is no answer, 409 is in flight) is what the flows see. Every call is an await point: the
 * request arrives (the key goes in flight), then, at a later step, the carrier answers. Keys are
 * remembered for `keyRetentionMs` after their answer, then forgotten. The world's clock, when it
 * moves past the carrier's handling time, first lets the carrier finish what is in flight
 * (`finishInFlight`): a carrier handles a request in seconds, while leases and rounds take minutes.
 */
export class CarrierModel {
  readonly bookings: CarrierBooking[] = [];
  private readonly keys = new Map<string, KeyState>();
  private calls = 0;
  private readonly startMs: number;

  constructor(
    private readonly points: AwaitPoints,
    private readonly nowMs: () => number,
    private readonly options: CarrierModelOptions,
  ) {
    this.startMs = nowMs();
  }

  /** The fetch one actor's carrier client uses: its calls are that actor's await points. */
  fetchFor(actor: Actor): typeof fetch {
    return async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? 'GET';
      if (method === 'POST') {
        const headers = new Headers(init?.headers);
        return this.book(actor, parseKeyHeader(headers.get('idempotency-key') ?? ''), String(init?.body ?? ''));
      }
      return this.lookup(actor, url.searchParams.get('idempotencyKey') ?? '');
    };
  }

  /** What the carrier holds under the key now: a booking, or nothing (an error kept, a refusal, forgotten). */
  bookingUnder(key: string): CarrierBooking | undefined {
    const kept = this.keys.get(key);
    if (kept?.state !== 'kept' || kept.status !== 201) return undefined;
    return this.bookings.find((b) => b.key === key && b.shipmentId === (kept.body as { shipmentId: string }).shipmentId);
  }

  /** Whether the carrier ever booked under the key, remembered or not. */
  bookedEverUnder(key: string): boolean {
    return this.bookings.some((b) => b.key === key);
  }

  /** The clock moved past the carrier's handling time: requests in flight are finished, old keys forgotten. */
  clockMoved(byMs: number): void {
    if (byMs >= carrierHandlingMs) for (const state of [...this.keys.values()]) if (state.state === 'in-flight') state.complete();
    for (const [key, state] of this.keys) {
      if (state.state === 'kept' && this.nowMs() >= state.atMs + this.options.keyRetentionMs) {
        this.keys.delete(key);
        this.points.timeline.add('carrier', `forgets key ${key} (${state.status} kept since t+${Math.round((state.atMs - this.startMs) / 1000)}s)`);
        this.points.timeline.count('carrier forgot a key');
      }
    }
  }

  private fate(): CarrierFate {
    const fate = this.options.fates[this.calls] ?? 'answered';
    this.calls += 1;
    return fate;
  }

  private async book(actor: Actor, key: string, body: string): Promise<Response> {
    const label = `carrier POST ${key}`;
    const arrival = await this.points.pass(actor, label);
    if (arrival.dies) return this.dead(actor, label);
    const fate = this.fate();
    const say = (what: string): void => this.points.timeline.add(actor.name, `${label} -> ${what}`);
    if (fate === 'unreachable') {
      say('UNREACHABLE (the connection failed), nothing arrived');
      this.points.timeline.count('carrier unreachable');
      throw connectionFailed();
    }
    const request = JSON.parse(body) as { orderReference: string };
    const fingerprint = body;
    const known = this.keys.get(key);
    if (known && known.fingerprint !== fingerprint) return answer(422, problem('Idempotency-Key was used with another payload'));
    if (known?.state === 'in-flight') {
      say('409 in flight');
      this.points.timeline.count('carrier in flight');
      return answer(409, problem('a request with this Idempotency-Key is still being handled'));
    }
    if (known?.state === 'kept') {
      say(`replays its kept ${known.status}`);
      this.points.timeline.count('carrier replayed a kept answer');
      return answer(known.status, known.body);
    }
    if (fate === 'unavailable' || fate === 'stored-error') {
      if (fate === 'stored-error') this.keep(key, fingerprint, 503, problem('the carrier is unavailable; nothing was booked'));
      say(`503${fate === 'stored-error' ? ', KEPT under the key' : ''}, nothing booked`);
      this.points.timeline.count(`carrier ${fate}`);
      return answer(503, problem('the carrier is unavailable; nothing was booked'));
    }
    if (fate === 'refused') {
      this.keep(key, fingerprint, 422, problem('the carrier does not serve this shipment'));
      say('422 refused (kept under the key)');
      this.points.timeline.count('carrier refused');
      return answer(422, problem('the carrier does not serve this shipment'));
    }
    let booked: { status: number; body: unknown } | undefined;
    const seenBy = new Set<string>();
    const complete = (): void => {
      if (booked) return;
      const shipmentId = `SHP-${this.bookings.length + 1}`;
      this.bookings.push({ key, orderReference: request.orderReference, shipmentId, atMs: this.nowMs(), seenInFlightBy: seenBy });
      booked = { status: 201, body: { shipmentId, status: 'booked', orderReference: request.orderReference } };
      this.keep(key, fingerprint, 201, booked.body);
      this.points.timeline.add('carrier', `BOOKS ${shipmentId} for ${request.orderReference} under key ${key}`);
    };
    this.keys.set(key, { state: 'in-flight', fingerprint, complete, seenBy });
    say('arrives; in flight');
    const handled = await this.points.pass(actor, `carrier answers POST ${key}`);
    complete(); // the request reached the carrier: it books whether or not its caller is still there
    if (handled.dies) return this.dead(actor, `carrier answers POST ${key}`);
    if (fate === 'answer-lost') {
      say('booked, ANSWER LOST (connection reset)');
      this.points.timeline.count('carrier booked, answer lost');
      throw connectionFailed();
    }
    say(`201 ${(booked!.body as { shipmentId: string }).shipmentId}`);
    this.points.timeline.count('carrier booked');
    return answer(booked!.status, booked!.body);
  }

  private async lookup(actor: Actor, key: string): Promise<Response> {
    const label = `carrier GET ${key}`;
    const step = await this.points.pass(actor, label);
    if (step.dies) return this.dead(actor, label);
    const fate = this.fate();
    const say = (what: string): void => this.points.timeline.add(actor.name, `${label} -> ${what}`);
    if (fate === 'unreachable' || fate === 'answer-lost') {
      say('no answer (the connection failed)');
      this.points.timeline.count('carrier look-up unanswered');
      throw connectionFailed();
    }
    if (fate === 'unavailable' || fate === 'stored-error') {
      say('503');
      this.points.timeline.count('carrier look-up unanswered');
      return answer(503, problem('the carrier is unavailable'));
    }
    const known = this.keys.get(key);
    if (!known) {
      say('404 nothing under this key');
      return answer(404, problem('nothing was booked under this Idempotency-Key'));
    }
    if (known.state === 'in-flight') {
      known.seenBy.add(actor.name);
      say('409 in flight');
      this.points.timeline.count('carrier look-up in flight');
      return answer(409, problem('a request with this Idempotency-Key is still being handled'));
    }
    say(`the kept ${known.status}`);
    if (known.status === 503) this.points.timeline.count('carrier look-up met a kept error');
    return answer(200, { idempotencyKey: key, status: known.status, body: known.body });
  }

  private keep(key: string, fingerprint: string, status: number, body: unknown): void {
    this.keys.set(key, { state: 'kept', fingerprint, status, body, atMs: this.nowMs() });
  }

  private dead<T>(actor: Actor, label: string): Promise<T> {
    this.points.die(actor, label);
    return never();
  }
}

/** How long the carrier takes at most to handle a request (the client's timeout is 10 s). */
export const carrierHandlingMs = 10_000;

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function problem(title: string): { title: string } {
  return { title };
}

/** What fetch throws for a refused or reset connection. */
function connectionFailed(): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
}

/** The key back out of its Structured Field string (`"..."`, with `\\` and `\"` escaped). */
function parseKeyHeader(header: string): string {
  return header.slice(1, -1).replace(/\\(.)/g, '$1');
}
