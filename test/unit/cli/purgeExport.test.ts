import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import Long from 'long';
import { describe, expect, it } from 'vitest';
import { purgeDeadLetters } from '../../../src/cli/dlqCommands.js';
import type { DlqContext } from '../../../src/cli/dlqCommands.js';
import { defaultPurgeExportPath, exportLine, openPurgeExport } from '../../../src/cli/purgeExport.js';

const message = (seq: number, body: unknown): ServiceBusReceivedMessage =>
  ({
    sequenceNumber: Long.fromNumber(seq),
    messageId: `m-${seq}`,
    body,
    deadLetterReason: 'PayloadConflict',
    applicationProperties: { 'idempotency-key': `k-${seq}` },
  }) as unknown as ServiceBusReceivedMessage;

/** A dead-letter receiver holding `messages` once; it remembers what was completed. */
function receiverOf(messages: ServiceBusReceivedMessage[]) {
  const completed: string[] = [];
  let handedOut = false;
  const receiver = {
    receiveMessages: async () => (handedOut ? [] : ((handedOut = true), messages)),
    completeMessage: async (m: ServiceBusReceivedMessage) => void completed.push(String(m.messageId)),
    abandonMessage: async () => undefined,
    renewMessageLock: async () => new Date(),
  } as unknown as ServiceBusReceiver;
  return { receiver, completed };
}

const ctxOf = (receiver: ServiceBusReceiver): DlqContext => ({
  receiver,
  sender: () => {
    throw new Error('purge sends nothing');
  },
  entityPath: 'orders/$deadletterqueue',
  duplicateDetectionWindowMs: 0,
  now: () => Date.parse('2026-12-03T08:00:00Z'),
  out: { line: () => undefined, progress: () => undefined },
});

describe('purge export', () => {
  it('names the file for the entity and the instant', () => {
    expect(defaultPurgeExportPath({ topic: 'order-events', subscription: 'au/dit' }, Date.parse('2026-12-03T08:00:00Z'))).toBe(
      'purge-order-events-au_dit-2026-12-03T08-00-00-000Z.jsonl',
    );
  });

  it('keeps the body as text, bytes as base64, and the broker properties', () => {
    expect(JSON.parse(exportLine(message(1, Uint8Array.from([0, 255]))))).toMatchObject({
      sequenceNumber: '1',
      messageId: 'm-1',
      deadLetterReason: 'PayloadConflict',
      bodyBase64: 'AP8=',
    });
    expect(JSON.parse(exportLine(message(2, { orderId: 'o-1' })))).toMatchObject({
      body: { orderId: 'o-1' },
      applicationProperties: { 'idempotency-key': 'k-2' },
    });
  });

  it("keeps a data section's bytes exactly, not the value the SDK parsed from them: text when it is UTF-8, else base64", () => {
    const text = '{"orderId":"o-1","amount":12345678901234567890,"rate":1.0,"orderId":"o-2"}';
    const parsed = message(3, JSON.parse(text) as unknown);
    const section = { ...parsed, _rawAmqpMessage: { bodyType: 'data', body: Buffer.from(text) } } as unknown as ServiceBusReceivedMessage;
    expect(JSON.parse(exportLine(section))).toMatchObject({ bodyText: text });
    expect(JSON.parse(exportLine(section))).not.toHaveProperty('body');
    const latin1 = Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]);
    const notUtf8 = { ...message(4, latin1.toString('latin1')), _rawAmqpMessage: { bodyType: 'data', body: latin1 } } as unknown as ServiceBusReceivedMessage;
    expect(JSON.parse(exportLine(notUtf8))).toMatchObject({ bodyBase64: latin1.toString('base64') });
  });

  it('writes each message before it is removed', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'purge-')), 'out.jsonl');
    const { receiver, completed } = receiverOf([message(1, 'a'), message(2, 'b')]);
    const exported = await openPurgeExport(path);
    const seenOnDisk: number[] = [];
    const completing = receiver.completeMessage.bind(receiver);
    receiver.completeMessage = async (m) => {
      seenOnDisk.push((await readFile(path, 'utf8')).split('\n').filter((l) => l.includes(`"m-${String(m.sequenceNumber)}"`)).length);
      return completing(m);
    };
    await purgeDeadLetters(ctxOf(receiver), { targets: [], all: true }, false, exported.write).finally(() => exported.close());
    expect(completed.sort()).toEqual(['m-1', 'm-2']);
    expect(seenOnDisk).toEqual([1, 1]);
    expect(exported.count()).toBe(2);
  });

  it('leaves a message whose export failed where it was', async () => {
    const { receiver, completed } = receiverOf([message(1, 'a')]);
    const reports = await purgeDeadLetters(ctxOf(receiver), { targets: [], all: true }, false, async () => {
      throw new Error('ENOSPC: no space left on device');
    });
    expect(completed).toEqual([]);
    expect(reports).toMatchObject([{ outcome: 'failed', detail: 'ENOSPC: no space left on device' }]);
  });

  it('never overwrites an earlier export', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'purge-')), 'out.jsonl');
    await writeFile(path, 'earlier\n');
    await expect(openPurgeExport(path)).rejects.toThrow(/EEXIST/);
  });
});
