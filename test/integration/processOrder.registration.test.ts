import { readFileSync } from 'node:fs';
import type { CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { programmingModel } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { rpcTriggerMetadata } from '../../emulators/functions-host/hostInvocation.js';
import { applicationProperty, envelopeFromTriggerMetadata } from '../../src/servicebus/index.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { loadProcessOrder } from '../support/processOrderHarness.js';

let client: CosmosClient;
let fn: RegisteredFunction;

beforeAll(async () => {
  client = testCosmosClient();
  fn = await loadProcessOrder(await createOrdersContainer(client));
});
afterAll(() => client.dispose());

describe('processOrder registration (what the host receives)', () => {
  it('is a Service Bus queue trigger on %ORDERS_QUEUE_NAME%, one message per call, auto-complete on', () => {
    const bindings = Object.values(fn.metadata.bindings);
    expect(bindings).toHaveLength(1);
    expect(bindings[0]).toEqual({
      name: expect.stringMatching(/^serviceBusTrigger/),
      type: 'serviceBusTrigger',
      direction: 'in',
      queueName: '%ORDERS_QUEUE_NAME%',
      connection: 'ServiceBusConnection',
      cardinality: 'one',
      autoCompleteMessages: true,
      properties: { supportsDeferredBinding: 'false' },
    });
    // Function-level retry policies do not apply to Service Bus; redelivery is the broker's job.
    expect(fn.metadata.retryOptions).toBeUndefined();
    expect(bindings[0]).not.toHaveProperty('isSessionsEnabled', true);
  });

  it('is found by the worker through package.json main, which globs only compiled functions', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { main: string };
    expect(pkg.main).toBe('dist/functions/*.js');
  });
});

describe('trigger metadata as the host sends it', () => {
  it('arrives camelCased, with ISO dates, numbers as numbers and unset values absent', async () => {
    const enqueued = new Date('2026-11-30T08:00:00.000Z');
    const coreContext = {
      invocationId: 'inv-1',
      metadata: fn.metadata,
      state: 'invocation',
      log: () => {},
      request: {
        inputData: [{ name: Object.keys(fn.metadata.bindings)[0], data: { string: '{"orderId":"o-1"}' } }],
        triggerMetadata: rpcTriggerMetadata({
          body: '{"orderId":"o-1"}',
          messageId: 'm-1',
          subject: 'OrderPlaced',
          deliveryCount: 3,
          sequenceNumber: 42,
          enqueuedTime: enqueued,
          applicationProperties: { 'Idempotency-Key': 'k-1', TenantId: 't1' },
        }),
      },
    };
    const { context, inputs } = await programmingModel().getInvocationModel(coreContext).getArguments();
    const metadata = (context as { triggerMetadata: Record<string, unknown> }).triggerMetadata;
    expect(inputs).toEqual([{ orderId: 'o-1' }]);
    expect(metadata).toMatchObject({
      messageId: 'm-1',
      deliveryCount: 3,
      sequenceNumber: 42,
      enqueuedTimeUtc: '2026-11-30T08:00:00.000Z',
      subject: 'OrderPlaced',
    });
    expect(metadata).not.toHaveProperty('correlationId');
    expect(metadata.applicationProperties).toEqual({ 'idempotency-Key': 'k-1', tenantId: 't1' });

    const envelope = envelopeFromTriggerMetadata(metadata);
    expect(envelope).toMatchObject({ messageId: 'm-1', deliveryCount: 3, sequenceNumber: 42, subject: 'OrderPlaced' });
    expect(envelope.correlationId).toBeUndefined();
    expect(applicationProperty(envelope, 'idempotency-key')).toBe('k-1');
  });
});
