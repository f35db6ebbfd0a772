import { describe, expect, it } from 'vitest';
import { dlqProgram, runDlqCli } from '../../../src/cli/dlqProgram.js';
import { commandKinds, commandPath, leafCommands } from '../../../src/cli/operatorActionLog.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';

// What the issue asks of every command of the operator tool, proved by walking its command tree.
const help: string[] = [];
const leaves = leafCommands(dlqProgram({ stdout: (t) => help.push(t), stderr: () => undefined, env: {} }, () => undefined));

/** The required arguments of the commands that have some (the runs then fail: nothing to connect to). */
const required: Readonly<Record<string, readonly string[]>> = {
  show: ['42'],
  'shipments resolve': ['o-1', '--retry'],
  'groups retry': ['g-0123456789'],
  trace: ['k-1'],
};

describe.each(leaves.map((c) => [commandPath(c), c] as const))('%s', (path, command) => {
  it('starts its run with one line naming the namespace, the entity (every one it reads) and the Cosmos DB account', async () => {
    const lines: string[] = [];
    await runDlqCli([...path.split(' '), ...(required[path] ?? [])], {
      stdout: () => undefined,
      stderr: () => undefined,
      announce: (line) => lines.push(line),
      env: {},
      actions: { store: new InMemoryDocumentStore(), osUser: () => 'ci' },
    });
    const entities =
      path === 'trace' || path.startsWith('groups') ? 'orders + order-events/subscriptions/fulfilment + order-events/subscriptions/audit' : 'orders';
    expect(lines).toEqual([`orders-ops: Service Bus (no namespace given) ${entities}, no Cosmos DB`]);
  });

  it('shows its defaults in --help in the units the docs use (never milliseconds)', () => {
    help.length = 0;
    command.outputHelp();
    expect(help.join('\n')).not.toMatch(/\(default: \d{4,}\)/);
  });
});

it('every command that only reads (every listing, show, trace, audit, doctor) takes --json', () => {
  const readOnly = leaves.filter((c) => commandKinds[commandPath(c)] === 'read-only');
  expect(readOnly.length).toBeGreaterThan(8);
  expect(readOnly.filter((c) => !c.options.some((o) => o.long === '--json')).map(commandPath)).toEqual([]);
});
