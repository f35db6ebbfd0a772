import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { dlqProgram, runDlqCli } from '../../../src/cli/dlqProgram.js';
import type { DlqIo } from '../../../src/cli/dlqProgram.js';
import type { OperatorActionDocument } from '../../../src/cli/operatorAction.js';
import { commandKinds, commandPath, leafCommands, registerOperatorActions } from '../../../src/cli/operatorActionLog.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';

const now = Date.parse('2026-12-03T08:00:00Z');
const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;

/** Arguments that make each command run its action (which then fails: nothing to connect to). */
const argumentsFor: Readonly<Record<string, readonly string[]>> = {
  show: ['42'],
  resubmit: ['--all', '--yes', '--why', 'the consumer is fixed'],
  purge: ['--all', '--yes', '--ticket', 'INC-7'],
  'parked resubmit': ['--all', '--yes', '--why', 'order arrived late'],
  'parked discard': ['--all', '--yes', '--why', 'customer cancelled'],
  'outbox requeue': ['--all', '--yes', '--ticket', 'INC-8'],
  'shipments resolve': ['order-1', '--retry'],
  'groups retry': ['g-0123456789', '--yes', '--why', 'carrier back'],
};

async function run(argv: readonly string[], actions: Partial<NonNullable<DlqIo['actions']>> = {}) {
  const store = new InMemoryDocumentStore(() => now);
  const stderr: string[] = [];
  const code = await runDlqCli(argv, {
    stdout: () => undefined,
    stderr: (t) => stderr.push(t),
    env: {},
    now: () => now,
    actions: { store, osUser: () => 'ci-user', newId: () => 'action-1', ...actions },
  });
  const records = (await store.find<OperatorActionDocument>({ docType: 'operator-action' })).map((r) => r.document);
  return { code, stderr: stderr.join('\n'), records };
}

const allPaths = () => leafCommands(dlqProgram({ stdout: () => undefined, stderr: () => undefined, env: {} }, () => undefined)).map(commandPath);

describe('the operator-action log', () => {
  it('classifies every command of the tool, and nothing else', () => {
    expect(allPaths().sort()).toEqual(Object.keys(commandKinds).sort());
  });

  describe.each(allPaths().map((path) => [path]))('%s', (path) => {
    const argv = [...path.split(' '), ...(argumentsFor[path] ?? [])];
    it('leaves a record before it acts if it changes anything, and none if it is read-only', async () => {
      const { records } = await run(argv);
      if (commandKinds[path] === 'read-only') {
        expect(records).toEqual([]);
        return;
      }
      // The action itself failed (no Service Bus, no Cosmos DB): the record was written first.
      expect(records).toEqual([
        expect.objectContaining({
          command: path,
          state: 'started',
          orderId: '#operator-actions-2026-12',
          operator: { name: 'ci-user', source: 'os-user' },
          at: '2026-12-03T08:00:00.000Z',
        }),
      ]);
    });
  });

  it('records nothing for a dry run, nor for a plan-only run of a command that acts only with --yes', async () => {
    expect((await run(['resubmit', '--all', '--dry-run'])).records).toEqual([]);
    expect((await run(['groups', 'retry', 'g-0123456789'])).records).toEqual([]);
  });

  it('refuses a destructive command without --why or --ticket, before anything', async () => {
    const purge = await run(['purge', '--all', '--yes']);
    expect(purge).toMatchObject({
      code: 2,
      records: [],
      stderr: expect.stringContaining('purge: this command cannot be undone: say why with --why <text> or --ticket <id>'),
    });
    expect((await run(['parked', 'discard', 'o-1/p-1', '--yes'])).code).toBe(2);
    expect((await run(['outbox', 'requeue', '--all', '--yes'])).stderr).toContain('outbox requeue: this command cannot be undone');
  });

  it('lets a named resubmit go without a why, and wants one in bulk', async () => {
    expect((await run(['resubmit', '42'])).records).toMatchObject([{ kind: 'changes', targets: ['42'] }]);
    expect((await run(['resubmit', '--reason', 'MaxDeliveryCountExceeded', '--yes'])).stderr).toContain('resubmit: this command cannot be undone');
  });

  it('wants --why, not only a ticket, to purge without an export', async () => {
    expect((await run(['purge', '--all', '--yes', '--no-export', '--ticket', 'INC-1'])).stderr).toContain(
      '--no-export destroys the only copy: say why with --why <text>',
    );
    expect((await run(['purge', '--all', '--yes', '--no-export', '--why', 'test data'])).records).toMatchObject([{ options: { export: false } }]);
  });

  it('names the export file of a purge in the record', async () => {
    const { records } = await run(['--queue', 'orders', 'purge', '7', '--yes', '--why', 'poison']);
    expect(records[0]?.options.export).toBe('purge-orders-2026-12-03T08-00-00-000Z.jsonl');
    expect(records[0]?.scope).toEqual({ queue: 'orders', cosmosDatabase: 'orders', cosmosContainer: 'orders' });
  });

  it('records the principal the credential resolves to, and --operator beside it', async () => {
    const scopes: string[] = [];
    const token = async (scope: string) => {
      scopes.push(scope);
      return jwt({ oid: 'oid-1', upn: 'ada@contoso.com', tid: 'tid-1' });
    };
    const { records } = await run(['--namespace', 'sb-x.servicebus.windows.net', '--operator', 'ada', 'outbox', 'requeue', 'm-1'], { token });
    expect(scopes).toEqual(['https://servicebus.azure.net/.default']);
    expect(records[0]?.operator).toEqual({
      name: 'ada@contoso.com',
      source: 'credential',
      objectId: 'oid-1',
      principalName: 'ada@contoso.com',
      tenantId: 'tid-1',
      claimed: 'ada',
    });
  });

  it('takes --operator when no credential is used', async () => {
    expect((await run(['--operator', 'bob', 'shipments', 'resolve', 'o-1', '--retry'])).records[0]?.operator).toEqual({ name: 'bob', source: 'operator-flag' });
  });

  it('refuses to act when the record cannot be written', async () => {
    const stderr: string[] = [];
    const code = await runDlqCli(['shipments', 'resolve', 'o-1', '--retry'], { stdout: () => undefined, stderr: (t) => stderr.push(t), env: {} });
    expect(code).toBe(2);
    expect(stderr.join('\n')).toContain('every change is recorded in the orders container (see `audit`): give --cosmos-endpoint');
  });

  it('marks the record finished with the exit code after the action, and records a command the table does not know', async () => {
    const store = new InMemoryDocumentStore(() => now);
    let exitCode = 0;
    const program = new Command('t').exitOverride();
    program.command('poke <what>').action(() => {
      exitCode = 1;
    });
    registerOperatorActions(
      program,
      { stderr: () => undefined, env: {}, now: () => now, actions: { store, osUser: () => 'ci-user', newId: () => 'a-9' } },
      () => exitCode,
    );
    await program.parseAsync(['poke', 'it'], { from: 'user' });
    const [record] = (await store.find<OperatorActionDocument>({ docType: 'operator-action' })).map((r) => r.document);
    expect(record).toMatchObject({
      id: 'a-9',
      command: 'poke',
      kind: 'changes',
      targets: ['it'],
      state: 'finished',
      exitCode: 1,
      finishedAt: '2026-12-03T08:00:00.000Z',
      ttl: 2_592_000,
    });
  });

  it("hands the record's id to the caller before the action runs, so what it writes can name its run", async () => {
    const store = new InMemoryDocumentStore(() => now);
    let heard: string | undefined;
    let seenByAction: string | undefined;
    const program = new Command('t').exitOverride();
    program.command('poke <what>').action(() => {
      seenByAction = heard;
    });
    registerOperatorActions(
      program,
      { stderr: () => undefined, env: {}, now: () => now, actions: { store, osUser: () => 'ci-user', newId: () => 'a-10' } },
      () => 0,
      (id) => (heard = id),
    );
    await program.parseAsync(['poke', 'it'], { from: 'user' });
    expect(seenByAction).toBe('a-10');
  });
});
