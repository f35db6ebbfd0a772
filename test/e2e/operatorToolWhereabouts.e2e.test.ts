import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import type { ServiceBusEmulator } from '../../emulators/servicebus-emulator/index.js';
import { runDlqCli } from '../../src/cli/dlqProgram.js';

/**
 * The operator tool knows where it is: its first line names the namespace, entity and account (on
 * stderr: `--json` stdout stays clean), inside an azd project it takes the environment's values,
 * `--consumer-name` follows the subscription, and `--help` speaks in the docs' units.
 */
let emulator: ServiceBusEmulator;
beforeAll(async () => {
  emulator = await startServiceBusEmulator({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
});

const main = resolve('src/cli/main.ts');
const tsx = resolve('node_modules/.bin/tsx');

function bin(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      tsx,
      [main, ...args],
      { cwd: options.cwd ?? process.cwd(), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
    );
  });
}

describe('the operator tool knows where it is', () => {
  it('starts every run with one line naming the namespace, entity and account, on stderr, so --json stdout stays clean', async () => {
    const result = await bin(['--connection-string', emulator.connectionString, 'list', '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ messages: [], truncated: [] });
    expect(result.stderr.split('\n')[0]).toBe(`orders-ops: Service Bus 127.0.0.1:${emulator.port} (connection string) orders, no Cosmos DB`);
    expect(result.stderr).not.toContain('SharedAccessKey');
  });

  it('inside an azd project, takes the namespace and the account from azd env get-values (the environment still wins)', async () => {
    const project = mkdtempSync(join(tmpdir(), 'azd-project-'));
    mkdirSync(join(project, '.azure'));
    const binDir = mkdtempSync(join(tmpdir(), 'fake-azd-'));
    writeFileSync(
      join(binDir, 'azd'),
      `#!/bin/sh\nprintf '%s\\n' 'SERVICEBUS_FULLY_QUALIFIED_NAMESPACE="sb-from-azd.servicebus.windows.net"' 'COSMOS_ENDPOINT="https://cosmos-from-azd.documents.azure.com:443/"' 'ORDERS_QUEUE_NAME="orders-azd"'\n`,
    );
    chmodSync(join(binDir, 'azd'), 0o755);
    // No credential can be had here: the run fails after its first line, which is what this checks.
    const result = await bin(['--timeout', '1s', 'list'], {
      cwd: project,
      env: { PATH: `${binDir}:${process.env.PATH ?? ''}`, AZURE_CLIENT_ID: '', COSMOS_ENDPOINT: 'https://cosmos-from-env.documents.azure.com:443/' },
    });
    expect(result.stderr.split('\n')[0]).toBe(
      'orders-ops: Service Bus sb-from-azd.servicebus.windows.net orders-azd, Cosmos DB https://cosmos-from-env.documents.azure.com:443/ orders/orders',
    );
  });

  it("defaults --consumer-name to the subscription (the fulfilment consumer's name), an explicit one wins", async () => {
    const lines: string[] = [];
    const run = (...args: string[]) =>
      runDlqCli(['--connection-string', emulator.connectionString, ...args, 'list', '--json'], {
        stdout: () => undefined,
        stderr: () => undefined,
        announce: (l) => lines.push(l),
        env: { CONSUMER_NAME: 'orders-consumer' },
      });
    expect(await run('--topic', 'order-events', '--subscription', 'fulfilment')).toBe(0);
    expect(await run('--topic', 'order-events', '--subscription', 'fulfilment', '--consumer-name', 'other')).toBe(0);
    expect(await run()).toBe(0);
    expect(lines).toEqual([
      `orders-ops: Service Bus 127.0.0.1:${emulator.port} (connection string) order-events/subscriptions/fulfilment, no Cosmos DB, consumer fulfilment`,
      `orders-ops: Service Bus 127.0.0.1:${emulator.port} (connection string) order-events/subscriptions/fulfilment, no Cosmos DB, consumer other`,
      `orders-ops: Service Bus 127.0.0.1:${emulator.port} (connection string) orders, no Cosmos DB, consumer orders-consumer`,
    ]);
  });

  it('shows defaults in --help in the units the docs use', async () => {
    const out: string[] = [];
    await runDlqCli(['--help'], { stdout: (t) => out.push(t), stderr: () => undefined, env: {} });
    const help = out.join('\n');
    expect(help).toMatch(/Usage: orders-ops/);
    expect(help).toMatch(/--duplicate-window <duration>[\s\S]*\(default: 10m\)/);
    expect(help).toMatch(/--timeout <duration>[\s\S]*\(default: 10s\)/);
    expect(help).not.toMatch(/600000|10000\b/);
  });

  it('is installed as orders-ops, with orders-dlq as an alias, and run as npm run ops (npm run dlq stays)', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.bin).toEqual({ 'orders-ops': 'dist/src/cli/main.js', 'orders-dlq': 'dist/src/cli/main.js' });
    expect({ ops: pkg.scripts.ops, dlq: pkg.scripts.dlq }).toEqual({ ops: 'tsx src/cli/main.ts', dlq: 'tsx src/cli/main.ts' });
  });
});
