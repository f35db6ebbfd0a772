import { join } from 'node:path';
import { DefaultAzureCredential } from '@azure/identity';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { randomUUID } from 'node:crypto';
import { startCosmosTriggerListener } from './cosmosTriggers.js';
import type { CosmosTriggerListener, CosmosTriggerOptions } from './cosmosTriggers.js';
import type { RegisteredFunction } from './functionsCore.js';
import { invokeServiceBusFunction } from './hostInvocation.js';
import type { InvocationResult, ServiceBusDelivery } from './hostInvocation.js';
import { dataSectionBytes } from './dataSection.js';
import { isFunctionDisabled, requestBodySizeLimitBytes, resolveBindingExpression } from './hostSettings.js';
import type { ServiceBusHostOptions } from './hostSettings.js';
import { fileLease, processLocalLease } from './listenerLease.js';
import { startHttpListener } from './httpTriggers.js';
import type { HttpListener } from './httpTriggers.js';
import { startTimerListener } from './timerTriggers.js';
import type { TimerListener } from './timerTriggers.js';

/** What to do with a delivery once the function has run; the host completes or abandons. */
export type Settlement = 'complete' | 'abandon' | 'leave-locked';

export interface LocalHostOptions {
  readonly settings: Readonly<Record<string, string>>;
  readonly host: ServiceBusHostOptions;
  /** Runs before each invocation: a pause here plays a slow function that outlives its lock. */
  readonly beforeInvocation?: (delivery: ServiceBusDelivery) => Promise<void>;
  /** Called after each invocation. */
  readonly onInvocation?: (fn: RegisteredFunction, delivery: ServiceBusDelivery, result: InvocationResult) => void;
  /**
   * Fault injection for demonstrations and tests: overrides the settlement, e.g. 'leave-locked' to
   * act as a process that died after the function wrote its effect and before it completed.
   */
  readonly settle?: (delivery: ServiceBusDelivery, result: InvocationResult) => Settlement | undefined;
  /**
   * Where timer listeners keep their leases: hosts given the same directory run each timer one at
   * a time, as instances of one function app do. Without it, this host runs its timers alone.
   */
  readonly timerLeaseDirectory?: string;
  /** Called after each timer invocation. */
  readonly onTimerInvocation?: (fn: RegisteredFunction, result: InvocationResult) => void;
  /** Cosmos DB triggers: this instance's name in the leases, shorter intervals, observers. */
  readonly cosmos?: Partial<Omit<CosmosTriggerOptions, 'settings'>>;
  /** HTTP triggers: the port to serve them on (Core Tools uses 7071; 0 picks a free one). Unset: not served. */
  readonly http?: { readonly port: number; readonly onInvocation?: (fn: RegisteredFunction, result: InvocationResult) => void };
}

export interface LocalFunctionsHost {
  /** `queueName` is the entity path: a queue, or `<topic>/Subscriptions/<subscription>`. */
  readonly listeners: readonly { functionName: string; queueName: string }[];
  readonly timers: readonly TimerListener[];
  /** Resolves once every Cosmos DB trigger listens (has checked its containers and tried its leases); rejects with why one cannot. */
  readonly cosmosTriggers: Promise<readonly CosmosTriggerListener[]>;
  /** Resolves once the HTTP triggers are served (undefined when `http` was not given); rejects when the port is taken. */
  readonly http: Promise<HttpListener | undefined>;
  /** `releaseLeases: false` plays a host that died: its Cosmos DB leases stay until they expire. */
  close(options?: { releaseLeases?: boolean }): Promise<void>;
}

/**
 * Runs registered timer-triggered functions on their schedules (timerTriggers.ts) and Service
 * Bus–triggered functions as the Functions host would: one receiver per
 * trigger on the resolved queue or topic subscription, up to `maxConcurrentCalls` invocations at once, locks renewed for
 * `maxAutoLockRenewalDuration`, trigger metadata shaped by the host's rules, and the message
 * completed when the function returns, abandoned when it throws.
 */
export function startLocalFunctionsHost(all: readonly RegisteredFunction[], options: LocalHostOptions): LocalFunctionsHost {
  // As the host does: a function disabled by its app setting gets no listener of any kind.
  const functions = all.filter((fn) => !isFunctionDisabled(fn.metadata.name, options.settings));
  const clients = new Map<string, ServiceBusClient>();
  const receivers: ServiceBusReceiver[] = [];
  const listeners: { functionName: string; queueName: string }[] = [];
  const timers = functions.flatMap((fn) => {
    const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'timerTrigger');
    if (!trigger) return [];
    const lease = options.timerLeaseDirectory ? fileLease(join(options.timerLeaseDirectory, `${fn.metadata.name}.listener.lease`)) : processLocalLease;
    return [startTimerListener(fn, trigger, { settings: options.settings, lease, onInvocation: options.onTimerInvocation })];
  });
  const instanceId = options.cosmos?.instanceId ?? `local-${process.pid}-${randomUUID().slice(0, 8)}`;
  const cosmosTriggers = Promise.all(
    functions.flatMap((fn) => {
      const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'cosmosDBTrigger');
      return trigger ? [startCosmosTriggerListener(fn, trigger, { ...options.cosmos, settings: options.settings, instanceId })] : [];
    }),
  );
  // Observed here so that a host nobody asks about its Cosmos triggers does not crash the process.
  cosmosTriggers.catch(() => undefined);
  const httpOptions = options.http;
  const maxRequestBodyBytes = requestBodySizeLimitBytes(options.settings);
  const http = httpOptions
    ? startHttpListener(functions, { port: httpOptions.port, maxRequestBodyBytes, onInvocation: httpOptions.onInvocation })
    : Promise.resolve(undefined);
  http.catch(() => undefined);
  for (const fn of functions) {
    const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'serviceBusTrigger');
    if (!trigger) continue;
    const connection = String(trigger.connection ?? 'AzureWebJobsServiceBus');
    const client = clients.get(connection) ?? connect(connection, options.settings);
    clients.set(connection, client);
    const receiverOptions = { maxAutoLockRenewalDurationInMs: options.host.maxAutoLockRenewalDurationMs };
    let queueName: string;
    let receiver: ServiceBusReceiver;
    if (trigger.topicName !== undefined) {
      const topic = resolveBindingExpression(String(trigger.topicName), options.settings);
      const subscription = resolveBindingExpression(String(trigger.subscriptionName), options.settings);
      queueName = `${topic}/Subscriptions/${subscription}`;
      receiver = client.createReceiver(topic, subscription, receiverOptions);
    } else {
      queueName = resolveBindingExpression(String(trigger.queueName), options.settings);
      receiver = client.createReceiver(queueName, receiverOptions);
    }
    receiver.subscribe(
      { processMessage: (m) => runOnce(fn, receiver, m, options), processError: async () => {} },
      { autoCompleteMessages: false, maxConcurrentCalls: options.host.maxConcurrentCalls },
    );
    receivers.push(receiver);
    listeners.push({ functionName: fn.metadata.name, queueName });
  }
  return {
    listeners,
    timers,
    cosmosTriggers,
    http,
    async close(closeOptions = {}) {
      await (await http.catch(() => undefined))?.close();
      const cosmos = await cosmosTriggers.catch(() => []);
      await Promise.all(cosmos.map((c) => c.close(closeOptions)));
      await Promise.all(timers.map((t) => t.close()));
      await Promise.all(receivers.map((r) => r.close()));
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}

function connect(connection: string, settings: Readonly<Record<string, string>>): ServiceBusClient {
  const connectionString = settings[connection];
  if (connectionString) return new ServiceBusClient(connectionString);
  const namespace = settings[`${connection}__fullyQualifiedNamespace`];
  if (namespace) return new ServiceBusClient(namespace, new DefaultAzureCredential());
  throw new Error(`app setting ${connection} (or ${connection}__fullyQualifiedNamespace) is not set`);
}

async function runOnce(fn: RegisteredFunction, receiver: ServiceBusReceiver, message: ServiceBusReceivedMessage, options: LocalHostOptions): Promise<void> {
  let delivery: ServiceBusDelivery;
  try {
    delivery = deliveryOf(message);
  } catch (error) {
    // As the host does when it cannot bind a trigger: the invocation fails with the exception, logged,
    // and the message is abandoned (never left to its lock in silence).
    console.error(`Exception binding parameter of Functions.${fn.metadata.name} for message ${String(message.messageId)}: ${(error as Error).message}`);
    await receiver.abandonMessage(message);
    return;
  }
  await options.beforeInvocation?.(delivery);
  const result = await invokeServiceBusFunction(fn, delivery);
  options.onInvocation?.(fn, delivery, result);
  const settlement = options.settle?.(delivery, result) ?? (result.error === undefined ? 'complete' : 'abandon');
  if (settlement === 'complete' && options.host.autoCompleteMessages) await receiver.completeMessage(message);
  else if (settlement === 'abandon') await receiver.abandonMessage(message);
}

/**
 * The JS SDK's message in the host's terms. The AMQP delivery-count header counts earlier failed
 * deliveries; the .NET client the host uses adds one, so a first delivery reports 1 (checked against
 * Azure.Messaging.ServiceBus by emulators/servicebus-emulator/test/dotnetClient.contract.test.ts).
 */
export function deliveryOf(m: ServiceBusReceivedMessage): ServiceBusDelivery {
  return {
    body: bodyText(m),
    messageId: m.messageId === undefined ? undefined : String(m.messageId),
    correlationId: m.correlationId === undefined ? undefined : String(m.correlationId),
    contentType: m.contentType,
    subject: m.subject,
    deliveryCount: (m.deliveryCount ?? 0) + 1,
    sequenceNumber: m.sequenceNumber?.toNumber() ?? 0,
    enqueuedTime: m.enqueuedTimeUtc,
    expiresAt: m.expiresAtUtc,
    lockToken: m.lockToken,
    sessionId: m.sessionId,
    applicationProperties: m.applicationProperties as Record<string, string | number | boolean> | undefined,
  };
}

/**
 * The host binds a Service Bus body for a Node function as a string, the UTF-8 text of its bytes
 * (azure-functions-nodejs-worker#684: "the handler receives the message only as a string ... even
 * when the message is a byte array"; azure-functions-host GrpcMessageConversionExtensions.ToRpc sends
 * a string as TypedData.String), and the worker's library JSON.parses it (@azure/functions
 * fromRpcTypedData -> tryJsonParse, no recursion of its own). The JS SDK this host receives with
 * has already JSON.parsed every data body (its tryToJsonDecode, whatever the content type), so go
 * back to the bytes: serialising that value again recursed, and a body nested 50,000 deep overflowed
 * the stack here, before any invocation.
 */
function bodyText(m: ServiceBusReceivedMessage): string | Uint8Array {
  const bytes = dataSectionBytes(m);
  if (bytes !== undefined) return Buffer.from(bytes).toString('utf8');
  if (typeof m.body === 'string') return m.body;
  if (m.body instanceof Uint8Array) return m.body;
  // An AMQP value or sequence body (another client's): the .NET client the host uses cannot read it as bytes either.
  return JSON.stringify(m.body);
}
