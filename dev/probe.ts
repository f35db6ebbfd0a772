import { ServiceBusClient } from '@azure/service-bus';
import { startServiceBusEmulator } from './servicebus-emulator/index.js';
async function main() {
  const em = await startServiceBusEmulator({ port: 0 });
  const c = new ServiceBusClient(em.connectionString.replace('SharedAccessKey=local', 'SharedAccessKey=wrong'), { retryOptions: { maxRetries: 0, timeoutInMs: 5000 } });
  const r = c.createReceiver('orders', { subQueueType: 'deadLetter' });
  const t = Date.now();
  try { await r.peekMessages(1); } catch (e) { console.log(Date.now() - t, (e as any).name, (e as any).code, JSON.stringify((e as any).message), (e as any).retryable); }
  await c.close(); await em.close();
}
main();
