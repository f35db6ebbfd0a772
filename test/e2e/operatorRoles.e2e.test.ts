import type { TokenCredential } from '@azure/identity';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import type { CosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { createCosmosClient } from '../../src/cosmos/index.js';

/**
 * The roles infra/modules/rbac.bicep grants the operator group: Cosmos DB Built-in Data Contributor
 * scoped to the orders container. The stand-in enforces that scope as Cosmos DB does (403, sub-status
 * 5301, on the database's metadata and on any other container): every command that reads the store
 * works with exactly that role, and a principal scoped elsewhere is told which role and scope to get.
 */
let cosmos: CosmosStandIn;
let serviceBus: ServiceBusEmulator;

beforeAll(async () => {
  cosmos = await startCosmosStandIn({
    port: 0,
    scopedPrincipals: {
      'operator-token': { principalId: 'operator-group-member', database: 'orders', container: 'orders' },
      'leases-token': { principalId: 'someone-else', database: 'orders', container: 'leases' },
    },
  });
  const admin = createCosmosClient({ endpoint: cosmos.endpoint, key: cosmos.key });
  const { database } = await admin.databases.createIfNotExists({ id: 'orders' });
  await database.containers.createIfNotExists({ id: 'orders', partitionKey: { paths: ['/orderId'] } });
  await database.containers.createIfNotExists({ id: 'leases', partitionKey: { paths: ['/id'] } });
  admin.dispose();
  serviceBus = await startServiceBusEmulator({ port: 0 });
});
afterAll(async () => {
  await serviceBus.close();
  await cosmos.close();
});

const tokenOf = (token: string): TokenCredential => ({ getToken: async () => ({ token, expiresOnTimestamp: Date.now() + 3_600_000 }) });

async function tool(token: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDlqCli(['--connection-string', serviceBus.connectionString, '--cosmos-endpoint', cosmos.endpoint, '--timeout', '5s', ...args], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: {},
    cosmosCredential: tokenOf(token),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('the operator tool with the roles the template grants operators', () => {
  it.each(
    [
      [['list', '--json'], { messages: [], truncated: [] }],
      [['--topic', 'order-events', '--subscription', 'audit', 'list', '--json'], { messages: [], truncated: [] }],
      [['--topic', 'order-events', '--subscription', 'fulfilment', 'list', '--json'], { messages: [], truncated: [] }],
      [['parked', 'list', '--json'], { items: [], truncated: [] }],
      [['outbox', 'list', '--json'], { entries: [], truncated: [] }],
      [['shipments', 'list', '--json'], { records: [], truncated: [] }],
    ].map(([args, empty]) => [(args as string[]).join(' '), args as string[], empty] as const),
  )('%s works with Data Contributor on the orders container only', async (_name, args, empty) => {
    const result = await tool('operator-token', ...args);
    expect({ code: result.code, stderr: result.stderr.split('\n').filter((l) => l.startsWith('error')) }).toEqual({ code: 0, stderr: [] });
    expect(JSON.parse(result.stdout)).toEqual(empty);
  });

  it('changes things, and records who did, with Data Contributor on the orders container only', async () => {
    const changes = [
      ['resubmit', '--all', '--yes', '--why', 'consumer fixed'],
      ['purge', '--all', '--yes', '--why', 'test data', '--no-export'],
      ['parked', 'resubmit', '--all', '--yes', '--why', 'orders stored'],
      ['parked', 'discard', '--all', '--yes', '--why', 'wrong ids'],
      ['outbox', 'requeue', '--all', '--yes', '--why', 'topic deployed'],
    ];
    for (const args of changes) {
      const result = await tool('operator-token', '--operator', 'ada', ...args);
      expect({ args, code: result.code, errors: result.stderr.split('\n').filter((l) => /error|warning/.test(l)) }).toEqual({ args, code: 0, errors: [] });
    }
    // Refused (no such record) is exit code 1, not a role problem: the record of the attempt was written.
    expect(await tool('operator-token', '--operator', 'ada', 'shipments', 'resolve', 'o-none', '--retry')).toMatchObject({
      code: 1,
      stderr: expect.not.stringContaining('error'),
    });
    const audit = await tool('operator-token', 'audit', '--json');
    expect(audit.code).toBe(0);
    expect((JSON.parse(audit.stdout) as { command: string; state: string }[]).map((r) => [r.command, r.state])).toEqual([
      ['resubmit', 'finished'],
      ['purge', 'finished'],
      ['parked resubmit', 'finished'],
      ['parked discard', 'finished'],
      ['outbox requeue', 'finished'],
      ['shipments resolve', 'finished'],
    ]);
  });

  it.each(
    [
      ['groups', '--json'],
      ['trace', 'o-none', '--json'],
    ].map((args) => [args.join(' '), args] as const),
  )('%s reads every entity and the store with those roles', async (_name, args) => {
    const result = await tool('operator-token', ...args);
    // trace: 1 is "nothing found"; 2 would be a refusal.
    expect({
      code: result.code === 1 && args[0] === 'trace' ? 0 : result.code,
      errors: result.stderr.split('\n').filter((l) => /error|warning/.test(l)),
    }).toEqual({ code: 0, errors: [] });
  });

  it('names the role and the scope to grant when the principal has none on the orders container', async () => {
    const result = await tool('leases-token', 'parked', 'list');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Cosmos DB Built-in Data Contributor/);
    expect(result.stderr).toContain('/dbs/orders/colls/orders');
  });
});
