import { randomUUID } from 'node:crypto';
import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { createOrdersContainer, documentsOf, testCosmosClient } from '../support/cosmosTestContainer.js';
import { newOrderId, orderPlaced } from '../support/orderMessages.js';

// Two Entra ID principals, as App Service authentication hands them to the worker (it strips any
// x-ms-client-principal* a client sends and sets its own; the local host, like Core Tools, has no
// Easy Auth, so the test sets what the platform would). INTAKE_CALLER_IDENTITY=entra: keys and
// orders belong to the principal that sent them.
let client: CosmosClient;
let container: Container;
let host: LocalFunctionsHost;
let baseUrl: string;

beforeAll(async () => {
  client = testCosmosClient();
  container = await createOrdersContainer(client);
  process.env.COSMOS_ORDERS_CONTAINER = container.id; // read by the function app as it loads
  process.env.INTAKE_CALLER_IDENTITY = 'entra';
  await import('../../functions/submitOrder.js');
  const fn = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'submitOrder') as RegisteredFunction;
  host = startLocalFunctionsHost([fn], {
    settings: {},
    host: { maxConcurrentCalls: 1, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    http: { port: 0 },
  });
  const listener = await host.http;
  if (!listener) throw new Error('the host serves no HTTP');
  baseUrl = listener.url;
});

afterAll(async () => {
  delete process.env.INTAKE_CALLER_IDENTITY;
  await host.close();
  client.dispose();
});

/** The x-ms-client-principal App Service authentication sets for an Entra ID caller: base64 JSON of its claims. */
function principalHeaders(objectId: string): Record<string, string> {
  const principal = {
    auth_typ: 'aad',
    name_typ: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
    role_typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
    claims: [
      { typ: 'http://schemas.microsoft.com/identity/claims/objectidentifier', val: objectId },
      { typ: 'http://schemas.microsoft.com/identity/claims/tenantid', val: '72f988bf-86f1-41af-91ab-2d7cd011db47' },
      { typ: 'appid', val: randomUUID() },
    ],
  };
  return {
    'X-MS-CLIENT-PRINCIPAL': Buffer.from(JSON.stringify(principal), 'utf8').toString('base64'),
    'X-MS-CLIENT-PRINCIPAL-ID': objectId,
    'X-MS-CLIENT-PRINCIPAL-IDP': 'aad',
  };
}

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

async function post(caller: Record<string, string>, key: string, order: unknown): Promise<Answer> {
  const response = await fetch(new URL('api/orders', baseUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key, ...caller },
    body: JSON.stringify(order),
  });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

const typeOf = (answer: Answer) => String(answer.body.type ?? '').slice('urn:idempotent-order-consumer:problem:'.length);

describe('two principals through the local host, INTAKE_CALLER_IDENTITY=entra', () => {
  it("gives each principal its own answer for one Idempotency-Key, neither naming the other's order", async () => {
    const alice = principalHeaders(randomUUID());
    const bob = principalHeaders(randomUUID());
    const key = randomUUID();
    const [aliceOrder, bobOrder] = [newOrderId(), newOrderId()];
    const first = await post(alice, key, orderPlaced(aliceOrder));
    const second = await post(bob, key, orderPlaced(bobOrder));
    expect([first.status, first.body.orderId]).toEqual([202, aliceOrder]);
    expect([second.status, second.body.orderId]).toEqual([202, bobOrder]);
    const aliceAgain = await post(alice, key, orderPlaced(aliceOrder));
    const bobAgain = await post(bob, key, orderPlaced(bobOrder));
    expect([aliceAgain.status, aliceAgain.body]).toEqual([202, first.body]);
    expect([bobAgain.status, bobAgain.body]).toEqual([202, second.body]);
    for (const answer of [first, aliceAgain]) expect(answer.text).not.toContain(bobOrder);
    for (const answer of [second, bobAgain]) expect(answer.text).not.toContain(aliceOrder);
    expect((await documentsOf(container, aliceOrder)).map((d) => d.id).sort()).toEqual([`intake|${aliceOrder}`, `outbox|OrderPlaced|${aliceOrder}`]);
    expect((await documentsOf(container, bobOrder)).map((d) => d.id).sort()).toEqual([`intake|${bobOrder}`, `outbox|OrderPlaced|${bobOrder}`]);
  });

  it("answers a principal that sends another's order id (with the same key or its own) as for any id taken outside its scope: 409, no key, no response of the owner", async () => {
    const alice = principalHeaders(randomUUID());
    const bob = principalHeaders(randomUUID());
    const [key, bobKey] = [randomUUID(), randomUUID()];
    const orderId = newOrderId();
    const accepted = await post(alice, key, orderPlaced(orderId));
    expect(accepted.status).toBe(202);
    const sameKey = await post(bob, key, orderPlaced(orderId));
    const ownKey = await post(bob, bobKey, orderPlaced(orderId, { customerId: 'someone-else' }));
    for (const answer of [sameKey, ownKey]) {
      expect([answer.status, typeOf(answer)]).toEqual([409, 'order-exists']);
      expect(answer.text).not.toContain(orderId);
      expect(answer.text).not.toContain(String(accepted.body.messageId));
      expect(answer.text).not.toContain(String(accepted.body.acceptedAt));
    }
    expect(sameKey.body).toEqual(ownKey.body);
    // The owner still gets its own answer, replayed.
    expect(await post(alice, key, orderPlaced(orderId))).toMatchObject({ status: 202, body: accepted.body });
    expect((await documentsOf(container, orderId)).map((d) => d.id).sort()).toEqual([`intake|${orderId}`, `outbox|OrderPlaced|${orderId}`]);
  });

  it('refuses a request that carries no authenticated principal with 401, writing nothing', async () => {
    const orderId = newOrderId();
    const refused = await post({}, randomUUID(), orderPlaced(orderId));
    expect([refused.status, typeOf(refused)]).toEqual([401, 'caller-unauthenticated']);
    expect(refused.body.detail).toContain('INTAKE_CALLER_IDENTITY');
    expect(await documentsOf(container, orderId)).toEqual([]);
  });
});
