import { describe, expect, it } from 'vitest';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';
import { intakeOn, orderRequest } from '../../support/intakeHarness.js';
import { orderPlaced } from '../../support/orderMessages.js';
import { TestClock } from '../../support/shipmentHarness.js';

// INTAKE_CALLER_IDENTITY=shared (the default): every caller is one scope, so a key may be another
// caller's. The answers still never name an order the request did not name.
describe('the shared caller scope', () => {
  it('answers a key used with another order 422 without naming that order', async () => {
    const { submit } = intakeOn(new InMemoryDocumentStore(), new TestClock());
    expect((await submit(orderRequest('k-shared', orderPlaced('o-first')))).status).toBe(202);
    const reused = await submit(orderRequest('k-shared', orderPlaced('o-second')));
    expect(reused).toMatchObject({ status: 422, body: { type: 'urn:idempotent-order-consumer:problem:idempotency-key-reused' } });
    expect(JSON.stringify(reused)).not.toContain('o-first');
  });

  it('answers the same key with another body for the same order 422, with a detail that names no order', async () => {
    const { submit } = intakeOn(new InMemoryDocumentStore(), new TestClock());
    await submit(orderRequest('k-body', orderPlaced('o-1')));
    const reused = await submit(orderRequest('k-body', orderPlaced('o-1', { customerId: 'c-other' })));
    expect(reused.status).toBe(422);
    expect((reused.body as { detail: string }).detail).toBe(
      'this Idempotency-Key was already used with another request; retry with the body of the first request, or use a new key for a new request',
    );
  });

  it('trusts no x-ms-client-principal a client sends: two "principals" share one key', async () => {
    const { submit } = intakeOn(new InMemoryDocumentStore(), new TestClock());
    const as = (oid: string) => ({
      'X-MS-CLIENT-PRINCIPAL-ID': oid,
      'X-MS-CLIENT-PRINCIPAL': Buffer.from(JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'oid', val: oid }] })).toString('base64'),
    });
    expect((await submit(orderRequest('k-spoof', orderPlaced('o-a'), as('11111111-1111-1111-1111-111111111111')))).status).toBe(202);
    expect((await submit(orderRequest('k-spoof', orderPlaced('o-b'), as('22222222-2222-2222-2222-222222222222')))).status).toBe(422);
  });
});
