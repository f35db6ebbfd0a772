import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCarrierStandIn } from '../carrierStandIn.js';
import type { CarrierStandIn } from '../carrierStandIn.js';
import { CarrierUnavailableError, HttpCarrierClient, idempotencyKeyHeader } from '../../../src/shipments/index.js';
import { eventually } from '../../../test/support/waiting.js';

/**
 * What the shipment flow needs from a carrier, and what emulators/carrier-emulator/ offers: the IETF Idempotency-Key
 * draft on bookings, and a look-up by key. Runs against the stand-in, and also against a real
 * carrier's sandbox when CARRIER_CONTRACT_URL (and CARRIER_CONTRACT_API_KEY) are given; the cases
 * that need an injected fault run against the stand-in only.
 */
interface Target {
  readonly name: string;
  readonly url: string;
  readonly apiKey?: string;
  readonly standIn?: CarrierStandIn;
}

const real = process.env.CARRIER_CONTRACT_URL;
if (!real) console.log('Carrier contract against a real carrier: skipped because CARRIER_CONTRACT_URL is not set (the stand-in runs)');
const targets: Target[] = [];
let standIn: CarrierStandIn;

beforeAll(async () => {
  standIn = await startCarrierStandIn();
  targets.push({ name: 'the stand-in', url: standIn.url, apiKey: standIn.apiKey, standIn });
  if (real) targets.push({ name: 'the real carrier', url: real, apiKey: process.env.CARRIER_CONTRACT_API_KEY });
});
afterAll(() => standIn.close());

const shipment = (orderReference = `o-${randomUUID()}`) => ({ orderReference, customerId: 'c-1', declaredValue: 20.08, currency: 'EUR' });

function post(target: Target, body: unknown, key?: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL('shipments', target.url.endsWith('/') ? target.url : `${target.url}/`), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(target.apiKey ? { Authorization: `Bearer ${target.apiKey}` } : {}),
      ...(key === undefined ? {} : { 'Idempotency-Key': idempotencyKeyHeader(key) }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const client = (target: Target, timeoutMs = 5000) => new HttpCarrierClient({ baseUrl: target.url, apiKey: target.apiKey, timeoutMs, now: () => new Date() });

const targetNames = real ? ['the stand-in', 'the real carrier'] : ['the stand-in'];

describe.each(targetNames)('the carrier contract against %s', (name) => {
  const target = () => targets.find((t) => t.name === name);
  const onlyStandIn = name !== 'the stand-in';

  it('books once per key: the same key and payload again replays the stored answer', async () => {
    const t = target()!;
    const key = `k-${randomUUID()}`;
    const body = shipment();
    const first = await post(t, body, key);
    expect(first.status).toBe(201);
    const booked = (await first.json()) as { shipmentId: string };
    const again = await post(t, body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { shipmentId: string }).shipmentId).toBe(booked.shipmentId);
    if (t.standIn) expect(t.standIn.bookings().filter((b) => b.idempotencyKey === key)).toHaveLength(1);
  });

  it('refuses the same key with another payload (422), a missing or malformed key (400), and no credential (401)', async () => {
    const t = target()!;
    const key = `k-${randomUUID()}`;
    expect((await post(t, shipment('o-a'), key)).status).toBe(201);
    const other = await post(t, shipment('o-b'), key);
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await post(t, shipment())).status).toBe(400);
    expect((await post(t, shipment(), undefined, { 'Idempotency-Key': 'not-quoted' })).status).toBe(400);
    expect((await post({ ...t, apiKey: 'wrong' }, shipment(), `k-${randomUUID()}`)).status).toBe(401);
  });

  it('answers a look-up by key: the booking it made, or 404 for a key it never saw', async () => {
    const t = target()!;
    const key = `k-${randomUUID()}`;
    expect(await client(t).lookup(key)).toEqual({ kind: 'not-found' });
    const booked = await client(t).book({ idempotencyKey: key, shipment: shipment() });
    expect(booked).toMatchObject({ kind: 'booked', shipmentId: expect.any(String) });
    expect(await client(t).lookup(key)).toMatchObject({ kind: 'booked', shipmentId: (booked as { shipmentId: string }).shipmentId });
  });

  // Injected faults exist on the stand-in only.
  it.skipIf(onlyStandIn)('while a request is in flight, the same key gets 409 and the look-up says in flight (a slow booking)', async () => {
    const t = target()!;
    t.standIn!.inject({ kind: 'slow', delayMs: 800 });
    const key = `k-${randomUUID()}`;
    const body = shipment();
    const faults = t.standIn!.stats().faultsInjected;
    const slow = post(t, body, key);
    // The stand-in marks the key in flight in the same step as it takes the fault: wait for that, not for a time.
    await eventually('the slow booking has started', () => t.standIn!.stats().faultsInjected > faults);
    const during = await post(t, body, key);
    expect(during.status).toBe(409);
    expect(during.headers.get('retry-after')).toBe('1');
    expect(await client(t).lookup(key)).toEqual({ kind: 'in-flight' });
    expect((await slow).status).toBe(201);
    expect(await client(t).lookup(key)).toMatchObject({ kind: 'booked' });
  });

  it.skipIf(onlyStandIn)('a refusal is kept under its key like any answer (an injected refusal)', async () => {
    const t = target()!;
    t.standIn!.inject({ kind: 'refuse', status: 400, title: 'postcode not served' });
    const key = `k-${randomUUID()}`;
    expect(await client(t).book({ idempotencyKey: key, shipment: shipment() })).toMatchObject({
      kind: 'refused',
      reason: 'the carrier answered 400: postcode not served',
    });
    expect(await client(t).lookup(key)).toMatchObject({ kind: 'refused', answer: { status: 400 } });
  });

  it.skipIf(onlyStandIn)(
    'a carrier that keeps an error answer under its key (as Stripe does): the replay is the same 503, and the look-up is no answer, not a refusal',
    async () => {
      const keeping = await startCarrierStandIn({ keepErrorAnswers: true });
      try {
        const t: Target = { name: 'a stand-in keeping error answers', url: keeping.url, apiKey: keeping.apiKey, standIn: keeping };
        keeping.inject({ kind: 'unavailable' });
        const key = `k-${randomUUID()}`;
        const body = shipment();
        expect((await post(t, body, key)).status).toBe(503);
        const replayed = await post(t, body, key);
        expect(replayed.status).toBe(503);
        expect(replayed.headers.get('idempotent-replayed')).toBe('true');
        const lookedUp = await client(t)
          .lookup(key)
          .then(
            (answer) => answer,
            (error: unknown) => error,
          );
        expect(lookedUp).toBeInstanceOf(CarrierUnavailableError);
        expect(lookedUp).toMatchObject({ status: 503, message: expect.stringContaining('keeps a 503 answer under this key') });
        expect(keeping.bookings()).toHaveLength(0);
      } finally {
        await keeping.close();
      }
    },
  );
});
