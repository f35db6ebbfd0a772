import rhea from 'rhea';
import type { Connection, EventContext } from 'rhea';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceBusEmulator } from '../index.js';
import type { ServiceBusEmulator } from '../index.js';

interface AttachFrame {
  snd_settle_mode?: number;
  rcv_settle_mode?: number;
}

// The .NET client adopts the settle modes of the broker's attach answer. Answered "mixed" on its
// pre-settled management link, it tracked every request under the same empty delivery tag, and two
// requests in flight failed with "An item with the same key has already been added".
describe('the emulator answers a client sender with the settle modes it asked for', () => {
  let emulator: ServiceBusEmulator;
  let connection: Connection;

  beforeAll(async () => {
    emulator = await startServiceBusEmulator({
      port: 0,
      queues: {
        orders: {
          lockDurationMs: 30_000,
          maxDeliveryCount: 5,
          defaultMessageTimeToLiveMs: 3_600_000,
          duplicateDetectionWindowMs: 0,
          deadLetteringOnMessageExpiration: false,
        },
      },
    });
    const container = rhea.create_container();
    connection = container.connect({ host: '127.0.0.1', port: emulator.port, reconnect: false });
    await new Promise<void>((resolve, reject) => {
      connection.once('connection_open', () => resolve());
      connection.once('connection_error', (ctx: EventContext) => reject(ctx.connection.error));
    });
  });
  afterAll(async () => {
    if (connection?.is_open()) {
      const closed = new Promise((resolve) => connection.once('connection_close', resolve));
      connection.close();
      await closed;
    }
    await emulator?.close();
  });

  async function answerTo(address: string, modes: AttachFrame): Promise<AttachFrame> {
    const sender = connection.open_sender({ target: { address }, ...modes } as never);
    await new Promise<void>((resolve, reject) => {
      sender.once('sendable', () => resolve());
      sender.once('sender_open', () => resolve());
      sender.once('sender_error', (ctx: EventContext) => reject(ctx.sender?.error));
    });
    const remote = (sender as unknown as { remote: { attach: AttachFrame } }).remote.attach;
    sender.close();
    return { snd_settle_mode: remote.snd_settle_mode, rcv_settle_mode: remote.rcv_settle_mode };
  }

  it.each([
    ['a pre-settled management link', 'orders/$management', { snd_settle_mode: 1, rcv_settle_mode: 0 }],
    ['a pre-settled $cbs link', '$cbs', { snd_settle_mode: 1, rcv_settle_mode: 0 }],
    ['an unsettled sender to a queue', 'orders', { snd_settle_mode: 0, rcv_settle_mode: 0 }],
    ['a mixed sender to a queue', 'orders', { snd_settle_mode: 2, rcv_settle_mode: 0 }],
  ])('%s', async (_name, address, modes) => {
    expect(await answerTo(address, modes)).toEqual(modes);
  });
});
