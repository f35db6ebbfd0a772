import type { Container, CosmosClient } from '@azure/cosmos';
import { afterAll, beforeAll } from 'vitest';
import { registeredFunctions } from '../../emulators/functions-host/functionsCore.js';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { invokeServiceBusFunction } from '../../emulators/functions-host/hostInvocation.js';
import type { InvocationResult, ServiceBusDelivery } from '../../emulators/functions-host/hostInvocation.js';
import { findOutcomeLine } from '../../dev/local/outcomeLine.js';
import { createOrdersContainer, testCosmosClient } from './cosmosTestContainer.js';
import { newOrderId, orderPlaced } from './orderMessages.js';

let nextSequenceNumber = 1;

export interface Send {
  readonly body: unknown;
  readonly messageId?: string;
  readonly subject?: string;
  readonly contentType?: string;
  readonly applicationProperties?: Record<string, string | number | boolean>;
}

/** A message as the broker holds it: one sequence number, delivered any number of times. */
export class BrokerMessage {
  readonly sequenceNumber = nextSequenceNumber++;
  private deliveries = 0;
  constructor(private readonly send: Send) {}

  delivery(): ServiceBusDelivery {
    this.deliveries += 1;
    const { body, ...rest } = this.send;
    return {
      ...rest,
      body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
      deliveryCount: this.deliveries,
      sequenceNumber: this.sequenceNumber,
      correlationId: 'corr-1',
    };
  }
}

/** Loads the app as the worker would (after settings are in place) and returns its processOrder registration. */
export async function loadProcessOrder(container: Container): Promise<RegisteredFunction> {
  process.env.COSMOS_ORDERS_CONTAINER = container.id;
  await import('../../functions/processOrder.js');
  const fn = [...registeredFunctions()].reverse().find((f) => f.metadata.name === 'processOrder');
  if (!fn) throw new Error('processOrder was not registered');
  return fn;
}

/** The structured line the consumer logged for one invocation. */
export function outcomeLine(result: InvocationResult): Record<string, unknown> {
  const line = findOutcomeLine(result);
  if (!line) throw new Error(`no outcome line in ${JSON.stringify(result.logs)}`);
  return line;
}

export async function deliver(fn: RegisteredFunction, message: BrokerMessage): Promise<InvocationResult> {
  return invokeServiceBusFunction(fn, message.delivery());
}

/** Delivers until the function stops throwing a transient error, as Service Bus would redeliver. */
export async function deliverUntilSettled(fn: RegisteredFunction, message: BrokerMessage, maxDeliveries = 50): Promise<InvocationResult> {
  for (let i = 0; i < maxDeliveries; i += 1) {
    const result = await deliver(fn, message);
    if (outcomeLine(result).outcome !== 'retry') return result;
  }
  throw new Error(`message ${message.sequenceNumber} still retrying after ${maxDeliveries} deliveries`);
}

export interface ProcessOrderFixture {
  readonly fn: RegisteredFunction;
  readonly container: Container;
}

/** For a test file: a fresh orders container and the app loaded against it, as the worker would load it. */
export function useProcessOrder(): ProcessOrderFixture {
  const fixture = {} as { fn: RegisteredFunction; container: Container; client: CosmosClient };
  beforeAll(async () => {
    fixture.client = testCosmosClient();
    fixture.container = await createOrdersContainer(fixture.client);
    fixture.fn = await loadProcessOrder(fixture.container);
  });
  afterAll(() => fixture.client.dispose());
  return fixture;
}

/** Delivers an OrderPlaced for a new order id and returns the id. */
export async function placeOrder(fn: RegisteredFunction): Promise<string> {
  const orderId = newOrderId();
  await deliver(fn, new BrokerMessage({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' }));
  return orderId;
}
