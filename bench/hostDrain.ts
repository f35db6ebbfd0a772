// One timed drain of `npm run bench -- --host`: the path's state prepared and its messages enqueued
// (untimed), then the consumer started and timed from its first delivery to the moment the orders queue
// holds no message (every one completed or dead-lettered), then the effects read back.
import type { ServiceBusReceivedMessage, ServiceBusSender } from '@azure/service-bus';
import { ids } from './consumerScenarios.js';
import { effectProblems } from './hostEffects.js';
import type { BenchMessage, HostPath } from './hostPaths.js';
import type { Side } from './hostSide.js';

export interface DrainResult {
  readonly messages: number;
  /** From the first delivery to the empty queue. */
  readonly ms: number;
  /** The same stretch on the monotonic clock (ms), to pick the drain's samples out of a CPU profile. */
  readonly window: readonly [number, number];
  readonly deliveries: number;
  readonly failed: number;
  readonly deadLettered: number;
  /** CPU of the consumer's process from its start to its stop (in the "together" layout, the stack's too). */
  readonly cpuMs: number;
  /** Orders whose stored effect is wrong, and the deliveries or dead letters that are not what the path makes. */
  readonly problems: readonly string[];
}

/** Every message as a real sender sends it: MessageId, Subject, a JSON content type, the body; in batches. */
export async function enqueue(sender: ServiceBusSender, messages: readonly BenchMessage[]): Promise<void> {
  let batch = await sender.createMessageBatch();
  for (const m of messages) {
    const message = { messageId: m.messageId, subject: m.subject, contentType: 'application/json', body: m.body };
    if (batch.tryAddMessage(message)) continue;
    await sender.sendMessages(batch);
    batch = await sender.createMessageBatch();
    if (!batch.tryAddMessage(message)) throw new Error(`host bench: message ${m.messageId} does not fit in a batch`);
  }
  if (batch.count > 0) await sender.sendMessages(batch);
}

/**
 * Receives all `count` messages (peek-lock) and abandons each once, so that the broker delivers each
 * again with its delivery count raised, as after a failed attempt. Every lock is taken before any is
 * given back, so no message is abandoned twice.
 */
export async function abandonOnce(side: Side, count: number, timeoutMs: number): Promise<void> {
  const receiver = side.bus.createReceiver(side.queue);
  try {
    const held: ServiceBusReceivedMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (held.length < count) {
      if (Date.now() > deadline) throw new Error(`host bench: received ${held.length} of ${count} messages to abandon`);
      held.push(...(await receiver.receiveMessages(Math.min(256, count - held.length), { maxWaitTimeInMs: 1000 })));
    }
    for (let i = 0; i < held.length; i += 64) await Promise.all(held.slice(i, i + 64).map((m) => receiver.abandonMessage(m)));
  } finally {
    await receiver.close();
  }
}

export async function drain(side: Side, path: HostPath, count: number, maxDeliveryCount: number, timeoutMs: number): Promise<DrainResult> {
  const orderIds = ids(count);
  const messages = side.name === 'app' ? await path.prepareApp(side.consume, orderIds) : await path.prepareBare(side.container, orderIds);
  await enqueue(side.sender, messages);
  if (path.redelivered) await abandonOnce(side, count, timeoutMs);
  side.stack.send({ cmd: 'watch' });
  await side.stack.next('watching', 10_000);
  const cpuBefore = side.consumer.cpuMs() ?? Number.NaN;
  side.consumer.send({ cmd: 'start', path: path.name });
  await side.consumer.next('started', 30_000);
  const drained = await side.stack.next('drained', timeoutMs);
  side.consumer.send({ cmd: 'stop' });
  const stopped = await side.consumer.next('stopped', 30_000);
  const cpuMs = (side.consumer.cpuMs() ?? Number.NaN) - cpuBefore;
  const expected = path.deadLettered
    ? { deliveries: count * maxDeliveryCount, failed: count * maxDeliveryCount, deadLettered: count }
    : { deliveries: count, failed: 0, deadLettered: 0 };
  const got = { deliveries: stopped.deliveries, failed: stopped.failed, deadLettered: drained.deadLettered };
  const problems = [
    ...(await effectProblems(side.container, path.effect, orderIds)),
    ...Object.entries(expected)
      .filter(([key, value]) => got[key as keyof typeof got] !== value)
      .map(([key, value]) => `${key}: ${got[key as keyof typeof got]}, expected ${value}`),
  ];
  const firstAt = stopped.firstAt ?? Number.NaN;
  return { messages: count, ms: drained.at - firstAt, window: [firstAt, drained.at], ...got, cpuMs, problems };
}
