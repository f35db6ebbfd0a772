import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RegisteredFunction } from '../../emulators/functions-host/functionsCore.js';
import { startLocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import type { LocalFunctionsHost } from '../../emulators/functions-host/localFunctionsHost.js';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import type { DlqIo } from '../../src/cli/dlqProgram.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { orderPlaced, paymentReceived } from '../support/orderMessages.js';
import { loadProcessOrder } from '../support/processOrderHarness.js';
import { eventually, testQueue } from '../support/waiting.js';

/**
 * The retention rule enforced by the tool: a dead-lettered message older than its markers can be
 * trusted to live is not resubmitted unless an operator forces it and says why. The tool's clock is
 * injected (31 days on), the broker's is real: the message's enqueued time is what it was.
 */
const dayMs = 24 * 3600 * 1000;
const markerTtl = { INBOX_MARKER_TTL_SECONDS: String(30 * 24 * 3600) };

let cosmos: CosmosClient;
let container: Container;
let processOrder: RegisteredFunction;
let emulator: ServiceBusEmulator;
let producer: ServiceBusClient;
let host: LocalFunctionsHost;
const deliveries: { messageId?: string; properties: Readonly<Record<string, unknown>> }[] = [];
const crashing = new Set<string>();

beforeAll(async () => {
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  processOrder = await loadProcessOrder(container);
  emulator = await startServiceBusEmulator({
    port: 0,
    queues: { orders: testQueue({ lockDurationMs: 2_000, maxDeliveryCount: 2, duplicateDetectionWindowMs: 0 }) },
  });
  producer = new ServiceBusClient(emulator.connectionString);
  host = startLocalFunctionsHost([processOrder], {
    settings: { ServiceBusConnection: emulator.connectionString, ORDERS_QUEUE_NAME: 'orders' },
    host: { maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true },
    beforeInvocation: async (delivery) => {
      deliveries.push({ messageId: delivery.messageId, properties: delivery.applicationProperties ?? {} });
      if (crashing.has(delivery.messageId ?? '')) throw new Error(`the consumer crashed on ${delivery.messageId}`);
    },
  });
});
afterAll(async () => {
  await host.close();
  await producer.close();
  await emulator.close();
  cosmos.dispose();
});

async function dlq(args: string[], io: Partial<DlqIo> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const connection = ['--connection-string', emulator.connectionString, '--cosmos-endpoint', inject('cosmosEndpoint'), '--cosmos-key', inject('cosmosKey')];
  const store = ['--cosmos-database', process.env.COSMOS_DATABASE ?? '', '--cosmos-container', container.id];
  const code = await runDlqCli([...connection, ...store, ...args], { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t), env: markerTtl, ...io });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

const inDeadLetters = (messageId: string) =>
  [...(emulator.entity('orders/$DeadLetterQueue')?.messages.values() ?? [])].some((m) => String(m.message.message_id) === messageId);
const send = (message: ServiceBusMessage) => producer.createSender('orders').sendMessages(message);
const amountPaid = async (orderId: string) => ((await container.item(orderId, orderId).read()).resource as { amountPaid?: number } | undefined)?.amountPaid;

/** A payment for a stored order whose consumer crashed on every delivery before writing anything. */
async function deadLetteredPayment(orderId: string, paymentId: string) {
  await send({ body: orderPlaced(orderId), messageId: `m-${orderId}`, subject: 'OrderPlaced' });
  await eventually(`order ${orderId}`, async () => (await amountPaid(orderId)) !== undefined);
  crashing.add(paymentId);
  await send({ body: paymentReceived(orderId, { paymentId, amount: 7 }), messageId: paymentId, subject: 'PaymentReceived' });
  await eventually(`${paymentId} in the dead-letter queue`, () => inDeadLetters(paymentId));
  crashing.delete(paymentId);
}

describe("resubmitting past the markers' retention", () => {
  beforeAll(async () => {
    await deadLetteredPayment('o-old', 'pay-old');
    await deadLetteredPayment('o-young', 'pay-young');
  });

  it('refuses a message older than INBOX_MARKER_TTL_SECONDS less the margin, naming the message, its age and the setting', async () => {
    const later = { now: () => Date.now() + 31 * dayMs };
    const result = await dlq(['resubmit', 'pay-old'], later);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/pay-old {2}refused {2}.*first enqueued .* \(31 d .* ago.*INBOX_MARKER_TTL_SECONDS 2592000 s/);
    expect(result.stdout).toContain('--force');
    expect((await dlq(['resubmit', 'pay-old', '--dry-run', '--json'], later)).stdout).toContain('"outcome": "refused"');
    expect(inDeadLetters('pay-old')).toBe(true);
    expect(deliveries.some((d) => d.messageId?.startsWith('pay-old~'))).toBe(false);
  });

  it('resubmits it with --force and a reason, recorded on the copy and in the report', async () => {
    const why = 'checked Cosmos DB by hand: payment pay-old is not on order o-old';
    const result = await dlq(['resubmit', 'pay-old', '--force', why, '--json'], { now: () => Date.now() + 31 * dayMs });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { reports: { outcome: string; copyMessageId: string; detail: string }[] };
    // 31 days on, the original's send is outside the duplicate-detection window; the copy still gets a
    // MessageId of its own, which no other message can have used inside it.
    expect(report.reports).toEqual([
      expect.objectContaining({
        outcome: 'resubmitted',
        copyMessageId: expect.stringMatching(/^pay-old~resubmit-1-[0-9a-f]{12}$/),
        detail: expect.stringContaining(`forced: ${why}`),
      }),
    ]);
    await eventually('the forced copy applied', async () => (await amountPaid('o-old')) === 7);
    const copy = deliveries.find((d) => d.messageId === report.reports[0]?.copyMessageId && d.properties['resubmit-count'] === 1);
    expect(copy?.properties).toMatchObject({ 'resubmit-forced-reason': why, 'first-enqueued-at': expect.stringMatching(/^\d{4}-/) });
  });

  it('resubmits a young message without --force, the copy carrying the time its lineage was first sent', async () => {
    const result = await dlq(['resubmit', 'pay-young', '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { reports: { outcome: string; detail: string }[] };
    expect(report.reports).toEqual([expect.objectContaining({ outcome: 'resubmitted', detail: expect.stringMatching(/markers kept until .* checked/) })]);
    await eventually('the copy applied', async () => (await amountPaid('o-young')) === 7);
    const copy = deliveries.find((d) => d.messageId?.startsWith('pay-young~resubmit-1-'));
    const original = deliveries.find((d) => d.messageId === 'pay-young');
    expect(copy?.properties['first-enqueued-at']).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(original).toBeDefined();
  });

  it('wants a reason with --force, and the retention settings as the app reads them', async () => {
    expect(await dlq(['resubmit', 'pay-old', '--force', ' '])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--force needs a reason of 1 to 500 characters'),
    });
    expect(await dlq(['resubmit', 'pay-old'], { env: { INBOX_MARKER_TTL_SECONDS: 'a month' } })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('INBOX_MARKER_TTL_SECONDS'),
    });
  });
});
