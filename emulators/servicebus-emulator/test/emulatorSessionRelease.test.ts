import { ServiceBusClient } from '@azure/service-bus';
import rhea from 'rhea';
import type { Connection, EventContext } from 'rhea';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceBusEmulator } from '../index.js';
import type { ServiceBusEmulator } from '../index.js';

const sessionFilter = 'com.microsoft:session-filter';

// A client may end its connection, or one AMQP session, with its links still attached (the JS SDK
// does when its connection goes idle). The session it held must be free at once, as when its socket
// drops: the emulator freed it only when the socket went, and a new receiver was refused the session.
describe('a session held by a receiver whose connection or AMQP session ends with its link attached', () => {
  let emulator: ServiceBusEmulator;
  let client: ServiceBusClient;

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
          requiresSession: true,
        },
      },
    });
    // No retries: a refused session is reported at once.
    client = new ServiceBusClient(emulator.connectionString, { retryOptions: { maxRetries: 0 } });
  });
  afterAll(async () => {
    await client?.close();
    await emulator?.close();
  });

  async function holdSession(sessionId: string): Promise<Connection> {
    const connection = rhea.create_container().connect({ host: '127.0.0.1', port: emulator.port, reconnect: false });
    const receiver = connection.open_receiver({ source: { address: 'orders', filter: { [sessionFilter]: sessionId } } } as never);
    await new Promise<void>((resolve, reject) => {
      receiver.once('receiver_open', () => resolve());
      receiver.once('receiver_error', (ctx: EventContext) => reject(ctx.receiver?.error));
    });
    return connection;
  }

  it('is free once the connection is closed', async () => {
    const connection = await holdSession('s-1');
    await expect(client.acceptSession('orders', 's-1')).rejects.toMatchObject({ code: 'SessionCannotBeLocked' });
    await new Promise((resolve) => {
      connection.once('connection_close', resolve);
      connection.close();
    });
    const receiver = await client.acceptSession('orders', 's-1');
    expect(receiver.sessionId).toBe('s-1');
    await receiver.close();
  });

  it('is free once the AMQP session is ended', async () => {
    const connection = await holdSession('s-2');
    const session = (
      connection as unknown as { find_receiver(f: () => boolean): { session: { close(): void; once(e: string, f: () => void): void } } }
    ).find_receiver(() => true).session;
    await new Promise<void>((resolve) => {
      session.once('session_close', () => resolve());
      session.close();
    });
    const receiver = await client.acceptSession('orders', 's-2');
    expect(receiver.sessionId).toBe('s-2');
    await receiver.close();
    connection.close();
  });
});
