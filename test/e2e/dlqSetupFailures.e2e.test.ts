import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createOrdersContainer, testCosmosClient } from '../support/cosmosTestContainer.js';
import { testQueue } from '../support/waiting.js';

// What an operator sees when the tool cannot do its work: the entity, the store or the credential
// named, within the timeout (10 s by default), never a bare "error: " after the SDK's retries.
let emulator: ServiceBusEmulator;
let silent: Server;
const sockets: Socket[] = [];
let containerId: string;

beforeAll(async () => {
  emulator = await startServiceBusEmulator({ port: 0, queues: { orders: testQueue({}) } });
  silent = createServer((socket) => sockets.push(socket)); // accepts and never answers
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const cosmos = testCosmosClient();
  containerId = (await createOrdersContainer(cosmos)).id;
  cosmos.dispose();
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await emulator.close();
});

async function dlq(args: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const startedAt = Date.now();
  const code = await runDlqCli(args, { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t), env: {} });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n'), elapsedMs: Date.now() - startedAt };
}
const cosmosArgs = (database: string, container: string) => [
  '--cosmos-endpoint',
  inject('cosmosEndpoint'),
  '--cosmos-key',
  inject('cosmosKey'),
  '--cosmos-database',
  database,
  '--cosmos-container',
  container,
];
const endpointOf = (server: Server) => `127.0.0.1:${(server.address() as AddressInfo).port}`;

describe('the dead-letter tool when it cannot do its work', () => {
  it('names a queue that does not exist, at once', async () => {
    const result = await dlq(['--connection-string', emulator.connectionString, '--queue', 'nosuch', 'list']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      `error: queue 'nosuch' does not exist in Service Bus namespace 127.0.0.1:${emulator.port} (The messaging entity 'sb://127.0.0.1:${emulator.port}/nosuch/$DeadLetterQueue/$management' could not be found.)`,
    );
    expect(result.elapsedMs).toBeLessThan(10_000);
  });

  it('names a topic subscription that does not exist', async () => {
    const result = await dlq(['--connection-string', emulator.connectionString, '--topic', 'order-events', '--subscription', 'nosuch', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: subscription 'order-events\/subscriptions\/nosuch' does not exist in Service Bus namespace/);
    expect(result.elapsedMs).toBeLessThan(10_000);
  });

  it('says the credential was refused, naming the namespace and the entity', async () => {
    const wrongKey = emulator.connectionString.replace('SharedAccessKey=local', 'SharedAccessKey=not-the-key');
    const result = await dlq(['--connection-string', wrongKey, 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: Service Bus namespace 127.0.0.1:${emulator.port} refused the credential for queue 'orders': InvalidSignature`);
    expect(result.elapsedMs).toBeLessThan(10_000);
  });

  it('says a namespace cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const endpoint = endpointOf(closed);
    await new Promise((resolve) => closed.close(resolve));
    const result = await dlq([
      '--connection-string',
      `Endpoint=sb://${endpoint};SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true`,
      'list',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: Service Bus namespace ${endpoint} cannot be reached: .*ECONNREFUSED`));
    expect(result.elapsedMs).toBeLessThan(10_000);
  });

  it('gives up on a namespace that never answers after --timeout, and says so', async () => {
    const endpoint = endpointOf(silent);
    const result = await dlq([
      '--connection-string',
      `Endpoint=sb://${endpoint};SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true`,
      '--timeout',
      '2s',
      'list',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: no answer from Service Bus namespace ${endpoint} within 2 s while opening queue 'orders'`));
    expect(result.elapsedMs).toBeGreaterThanOrEqual(1_900);
    expect(result.elapsedMs).toBeLessThan(6_000);
  });

  it('refuses to report store state against a database that does not exist', async () => {
    const result = await dlq(['--connection-string', emulator.connectionString, ...cosmosArgs('no-such-database', containerId), 'list']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    // Only the container is read (an operator's container-scoped role cannot read the database); the error still names the database.
    expect(result.stderr).toBe(
      `error: Cosmos DB container '${containerId}' in database 'no-such-database' does not exist at ${inject('cosmosEndpoint')} (check --cosmos-database / COSMOS_DATABASE and --cosmos-container / COSMOS_ORDERS_CONTAINER)`,
    );
  });

  it('refuses to report store state against a container that does not exist', async () => {
    const result = await dlq([
      '--connection-string',
      emulator.connectionString,
      ...cosmosArgs(process.env.COSMOS_DATABASE ?? '', 'no-such-container'),
      'show',
      '1',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error: Cosmos DB container 'no-such-container' in database '${process.env.COSMOS_DATABASE ?? ''}' does not exist`);
  });

  it('works when everything exists, and lists its exit codes in --help', async () => {
    expect(await dlq(['--connection-string', emulator.connectionString, ...cosmosArgs(process.env.COSMOS_DATABASE ?? '', containerId), 'list'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('0 dead-lettered message(s)'),
    });
    const help = await dlq(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /Exit codes:\n {2}0 {2}done\n {2}1 {2}a message failed, or a named message was not found\n {2}2 {2}bad usage, or Service Bus or Cosmos DB could not be used/,
    );
  });
});
