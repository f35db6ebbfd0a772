// Run as its own process by emulators/servicebus-emulator/test/emulatorExit.test.ts: starts the emulator, leaves a
// client connected (as a crashed or careless consumer would), closes the emulator, and expects the
// process to exit by itself, which it cannot while a server-side connection keeps a timer.
import { ServiceBusClient } from '@azure/service-bus';
import { startServiceBusEmulator } from '../index.js';

async function main(): Promise<void> {
  const emulator = await startServiceBusEmulator({
    port: 0,
    queues: {
      q: {
        lockDurationMs: 30_000,
        maxDeliveryCount: 3,
        defaultMessageTimeToLiveMs: 60_000,
        duplicateDetectionWindowMs: 0,
        deadLetteringOnMessageExpiration: false,
      },
    },
    topics: {},
  });
  const client = new ServiceBusClient(emulator.connectionString);
  await client.createSender('q').sendMessages({ body: 'x' });
  const receiver = client.createReceiver('q', { receiveMode: 'receiveAndDelete' });
  await receiver.receiveMessages(1, { maxWaitTimeInMs: 2000 });
  // The client is never closed: only the emulator goes away.
  await emulator.close();
  process.stdout.write('closed\n');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
