import type { Container, CosmosClient } from '@azure/cosmos';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusMessage } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { testQueue } from '../support/waiting.js';

/**
 * The chaos run's hostile messages (dev/chaos/chaosWorkload.ts), dead-lettered, and ids an attacker
 * could choose: the tool lists and shows each without crashing, prints no control character, and
 * prints every id so that it pastes into a shell as the same word.
 */
const at = '2026-11-30T08:00:00Z';
const order = (orderId: string) => ({ orderId, customerId: 'c', currency: 'EUR', lines: [{ sku: 'S', quantity: 1, unitPrice: 1 }], placedAt: at });
const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
const hostile: ServiceBusMessage[] = [
  { messageId: 'hostile-json', subject: 'OrderPlaced', body: '{"orderId": ' },
  { messageId: 'hostile-deep', subject: 'OrderPlaced', body: deep },
  // The same nesting as JSON bytes: the SDK parses a data section into a value 50,000 deep.
  { messageId: 'hostile-deep-bytes', subject: 'OrderPlaced', contentType: 'application/json', body: Buffer.from(deep) },
  { messageId: 'hostile-key', subject: 'OrderPlaced', applicationProperties: { 'idempotency-key': '   ' }, body: order('chaos-hostile') },
  { messageId: 'hostile-ce', subject: 'OrderPlaced', applicationProperties: { 'cloudEvents:id': 'e-1' }, body: order('chaos-hostile-ce') },
];
const hostileIds = [
  'a|b',
  'with space',
  '$(touch pwned)',
  "it's",
  '"quoted"',
  'back`tick`',
  '\u001b]0;pwned\u0007\u001b[2Jcleared',
  'line\nbreak',
  'c1\u009bcsi',
];

let emulator: ServiceBusEmulator;
let client: ServiceBusClient;
let cosmos: CosmosClient;
let container: Container;

beforeAll(async () => {
  cosmos = testCosmosClient();
  container = await createOrdersContainer(cosmos);
  emulator = await startServiceBusEmulator({ port: 0, queues: { orders: testQueue({ maxDeliveryCount: 1, duplicateDetectionWindowMs: 0 }) } });
  client = new ServiceBusClient(emulator.connectionString);
  const sender = client.createSender('orders');
  await sender.sendMessages([...hostile, ...hostileIds.map((messageId, n) => ({ messageId, subject: 'OrderPlaced', body: order(`o-hostile-${n}`) }))]);
  await sender.close();
  const receiver = client.createReceiver('orders');
  let left = hostile.length + hostileIds.length;
  while (left > 0) {
    const batch = await receiver.receiveMessages(left, { maxWaitTimeInMs: 2000 });
    if (batch.length === 0) throw new Error(`${left} messages never arrived`);
    for (const m of batch) await receiver.deadLetterMessage(m, { deadLetterReason: 'Hostile\u001b[31m', deadLetterErrorDescription: 'red\u001b[0m' });
    left -= batch.length;
  }
  await receiver.close();
});
afterAll(async () => {
  await client.close();
  await emulator.close();
  cosmos.dispose();
});

async function tool(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const cosmosArgs = [
    '--cosmos-endpoint',
    inject('cosmosEndpoint'),
    '--cosmos-key',
    inject('cosmosKey'),
    '--cosmos-database',
    process.env.COSMOS_DATABASE ?? '',
    '--cosmos-container',
    container.id,
  ];
  const code = await runDlqCli(['--connection-string', emulator.connectionString, ...cosmosArgs, ...args], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: {},
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Any C0 control but the newline between lines, DEL, or a C1 control (0x9b is CSI on some terminals). */
// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

/** What a POSIX shell makes of the first word of `text` (plain, '...' joined by \\', or $'...' with \\xHH and \\uHHHH): the id back. */
function firstShellWord(text: string): string {
  let word = '';
  let i = 0;
  while (i < text.length && !/\s/.test(text[i] ?? '')) {
    if (text.startsWith("$'", i)) {
      for (i += 2; text[i] !== "'"; i++) {
        if (text[i] === '\\') {
          const hex = /^(?:x([0-9a-f]{2})|u([0-9a-f]{4}))/.exec(text.slice(i + 1));
          word += hex ? String.fromCharCode(parseInt(hex[1] ?? hex[2] ?? '', 16)) : (text[i + 1] ?? '');
          i += hex ? hex[0].length : 1;
        } else word += text[i];
      }
      i++;
    } else if (text[i] === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (text[i] === '\\') {
      word += text[i + 1];
      i += 2;
    } else word += text[i++];
  }
  return word;
}

describe('the operator tool on hostile messages', () => {
  it('lists every one, as a table and as JSON, with no control character in either', async () => {
    const table = await tool('list');
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: '' });
    expect(table.stdout).not.toMatch(controlCharacter);
    expect(table.stdout).toContain(`${hostile.length + hostileIds.length} dead-lettered message(s)`);
    const json = await tool('list', '--json');
    expect(json.stdout).not.toMatch(controlCharacter);
    expect((JSON.parse(json.stdout) as { messages: { messageId: string }[] }).messages.map((r) => r.messageId)).toEqual([
      ...hostile.map((m) => m.messageId),
      ...hostileIds,
    ]);
  });

  it.each(hostile.map((m) => String(m.messageId)))('shows %s without crashing', async (id) => {
    const shown = await tool('show', id);
    expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: '' });
    expect(shown.stdout).not.toMatch(controlCharacter);
    expect((JSON.parse(shown.stdout) as { messageId: string }).messageId).toBe(id);
  });

  it('prints every id so that it pastes into a shell as the same word, and finds the message by it', async () => {
    const dryRun = await tool('resubmit', '--all', '--dry-run');
    expect(dryRun.stdout).not.toMatch(controlCharacter);
    for (const id of hostileIds) {
      const line = dryRun.stdout.split('\n').find((l) => l.includes('would-resubmit') && firstShellWord(l.trim().replace(/^\d+\s+/, '')) === id);
      expect(line, `no pasteable line for ${JSON.stringify(id)} in\n${dryRun.stdout}`).toBeDefined();
      const shown = await tool('show', id);
      expect({ code: shown.code, id: (JSON.parse(shown.stdout) as { messageId: string }).messageId }).toEqual({ code: 0, id });
    }
  });

  it.each([...hostile.map((m) => String(m.messageId)), ...hostileIds])('traces %j without crashing, and prints no control character', async (id) => {
    const traced = await tool('trace', id, '--json');
    // 2 is an error (a crash ends there); 0 found, 1 found nothing: here it finds the dead letter.
    expect(traced.code).toBe(0);
    expect(traced.stdout).not.toMatch(controlCharacter);
    expect(traced.stderr).not.toMatch(controlCharacter);
    const story = JSON.parse(traced.stdout) as { events: { where: string; detail: string }[] };
    expect(story.events.some((e) => e.where.includes('$deadletterqueue') || e.where.includes('dead-letter'))).toBe(true);
    const table = await tool('trace', id);
    expect(table.stdout).not.toMatch(controlCharacter);
  });
});
