import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadQueueFile, startServiceBusEmulator, toQueueSettings, toTopicConfig } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';
import { requiredIndexedPaths } from '../../src/doctor/index.js';
import type { CheckResult } from '../../src/doctor/index.js';
import { testCosmosClient } from '../support/cosmosTestContainer.js';

/**
 * `npm run doctor` against the stand-ins: a namespace and an account made as infra/ makes them
 * pass every check; a queue made without duplicate detection and with a shorter lock than the
 * settings mirror, and an account without the leases container, fail exactly those three.
 */
let right: ServiceBusEmulator;
let wrong: ServiceBusEmulator;
const databases = { right: `doctor-right-${randomUUID().slice(0, 8)}`, wrong: `doctor-wrong-${randomUUID().slice(0, 8)}` };

beforeAll(async () => {
  const file = loadQueueFile();
  const topics = Object.fromEntries(Object.entries(file.topics).map(([name, t]) => [name, toTopicConfig(t)]));
  const orders = file.queues.orders;
  if (!orders) throw new Error('infra/servicebus-queues.json has no orders queue');
  right = await startServiceBusEmulator({ port: 0, healthPort: 0 });
  wrong = await startServiceBusEmulator({
    port: 0,
    healthPort: 0,
    queues: { orders: toQueueSettings({ ...orders, requiresDuplicateDetection: false, lockDurationSeconds: 30 }) },
    topics,
  });
  const cosmos = testCosmosClient();
  try {
    for (const [id, withLeases] of [
      [databases.right, true],
      [databases.wrong, false],
    ] as const) {
      const { database } = await cosmos.databases.createIfNotExists({ id });
      // As infra/modules/cosmos.bicep creates them.
      await database.containers.create({
        id: 'orders',
        partitionKey: { paths: ['/orderId'] },
        defaultTtl: -1,
        indexingPolicy: {
          indexingMode: 'consistent',
          automatic: true,
          includedPaths: requiredIndexedPaths.map((path) => ({ path })),
          excludedPaths: [{ path: '/*' }],
        },
      });
      if (withLeases) await database.containers.create({ id: 'leases', partitionKey: { paths: ['/id'] } });
    }
  } finally {
    cosmos.dispose();
  }
});

afterAll(async () => {
  const cosmos = testCosmosClient();
  for (const id of Object.values(databases))
    await cosmos
      .database(id)
      .delete()
      .catch(() => undefined);
  cosmos.dispose();
  await right.close();
  await wrong.close();
});

async function doctor(emulator: ServiceBusEmulator, database: string, extra: string[] = []) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const args = [
    '--connection-string',
    emulator.administrationConnectionString ?? '',
    '--cosmos-endpoint',
    inject('cosmosEndpoint'),
    '--cosmos-key',
    inject('cosmosKey'),
    '--cosmos-database',
    database,
    'doctor',
    ...extra,
  ];
  const code = await runDlqCli(args, { stdout: (t) => stdout.push(t), stderr: (t) => stderr.push(t), env: {} });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

describe('npm run doctor', () => {
  it('passes a namespace and an account made as infra/ makes them, one ok line a check', async () => {
    const result = await doctor(right, databases.right);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    const checks = lines.slice(0, -1);
    expect(checks.every((line) => line.startsWith('ok      '))).toBe(true);
    expect(checks).toContain("ok      queue 'orders' duplicate detection: on (window 600 s)");
    expect(checks).toContain('ok      subscription \'order-events/fulfilment\' rule \'retries\': correlation filter {"to":"fulfilment"}');
    expect(checks).toContain("ok      container 'leases' partition key: /id");
    expect(lines.at(-1)).toBe(`${checks.length} checks: ${checks.length} ok, 0 missing, 0 wrong`);
    expect(result.code).toBe(0);
  });

  it('names exactly what is wrong: duplicate detection off, a lock shorter than the settings say, no leases container', async () => {
    const result = await doctor(wrong, databases.wrong, ['--json']);
    const report = JSON.parse(result.stdout) as { ok: boolean; results: CheckResult[] };
    expect(report.ok).toBe(false);
    expect(report.results.filter((r) => r.status !== 'ok').map((r) => [r.status, r.subject, r.property, r.expected, r.found])).toEqual([
      ['WRONG', "queue 'orders'", 'duplicate detection', 'on', 'off'],
      ['WRONG', "queue 'orders'", 'lock duration', '60 s (QUEUE_LOCK_DURATION_SECONDS)', '30 s'],
      ['MISSING', "container 'leases'", 'exists', 'a container partitioned by /id', 'nothing'],
    ]);
    expect(result.code).toBe(1);
  });

  it('prints what is wrong with how to mend it, and what cannot be changed after creation', async () => {
    const result = await doctor(wrong, databases.wrong);
    expect(result.stdout).toContain(
      "WRONG   queue 'orders' duplicate detection: expected on, found off (duplicate detection can only be enabled when the entity is created (Standard or Premium): create a new one with it)",
    );
    expect(result.stdout).toContain(
      "WRONG   queue 'orders' lock duration: expected 60 s (QUEUE_LOCK_DURATION_SECONDS), found 30 s (set QUEUE_LOCK_DURATION_SECONDS=30",
    );
    expect(result.stdout).toMatch(/\n\d+ checks: \d+ ok, 1 missing, 2 wrong$/);
    expect(result.code).toBe(1);
  });

  it('compares with the settings it is given: the same queue passes when QUEUE_LOCK_DURATION_SECONDS says 30', async () => {
    const stdout: string[] = [];
    const code = await runDlqCli(
      [
        '--connection-string',
        wrong.administrationConnectionString ?? '',
        '--cosmos-endpoint',
        inject('cosmosEndpoint'),
        '--cosmos-key',
        inject('cosmosKey'),
        '--cosmos-database',
        databases.right,
        'doctor',
        '--json',
      ],
      { stdout: (t) => stdout.push(t), stderr: () => undefined, env: { QUEUE_LOCK_DURATION_SECONDS: '30' } },
    );
    const report = JSON.parse(stdout.join('\n')) as { results: CheckResult[] };
    expect(report.results.filter((r) => r.status !== 'ok').map((r) => r.property)).toEqual(['duplicate detection']);
    expect(code).toBe(1);
  });

  it('says which entities a refused credential could not read, and still checks the account', async () => {
    const wrongKey = (right.administrationConnectionString ?? '').replace('SharedAccessKey=local', 'SharedAccessKey=not-the-key');
    const stdout: string[] = [];
    const code = await runDlqCli(
      [
        '--connection-string',
        wrongKey,
        '--cosmos-endpoint',
        inject('cosmosEndpoint'),
        '--cosmos-key',
        inject('cosmosKey'),
        '--cosmos-database',
        databases.right,
        'doctor',
        '--json',
      ],
      { stdout: (t) => stdout.push(t), stderr: () => undefined, env: {} },
    );
    const { results } = JSON.parse(stdout.join('\n')) as { results: CheckResult[] };
    expect(results.filter((r) => r.status !== 'ok').map((r) => [r.status, r.subject, r.property])).toEqual([
      ['WRONG', "queue 'orders'", 'readable'],
      ['WRONG', "topic 'order-events'", 'readable'],
      ['WRONG', "subscription 'order-events/fulfilment'", 'readable'],
      ['WRONG', "subscription 'order-events/audit'", 'readable'],
    ]);
    expect(results.find((r) => r.property === 'readable')?.found).toMatch(/^refused \(401\): InvalidSignature/);
    expect(results.filter((r) => r.subject.startsWith('container')).every((r) => r.status === 'ok')).toBe(true);
    expect(code).toBe(1);
  });

  it('stops with exit code 2 and the reason when the namespace cannot be read at all', async () => {
    const stderr: string[] = [];
    const code = await runDlqCli(
      [
        '--connection-string',
        right.connectionString.replace(/:\d+;/, ':1;'),
        '--cosmos-endpoint',
        inject('cosmosEndpoint'),
        '--cosmos-key',
        inject('cosmosKey'),
        '--timeout',
        '3s',
        'doctor',
      ],
      { stdout: () => undefined, stderr: (t) => stderr.push(t), env: {} },
    );
    expect(code).toBe(2);
    expect(stderr.join('\n')).toMatch(/^error: reading queue 'orders' at 127\.0\.0\.1:1 failed \(no answer within 3000 ms\)/);
  });
});
