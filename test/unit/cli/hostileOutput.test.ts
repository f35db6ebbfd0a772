import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { auditTable } from '../../../src/cli/auditCommands.js';
import { runDlqCli } from '../../../src/cli/dlqProgram.js';
import { deadLetterReportLine, deadLetterTable } from '../../../src/cli/deadLetterCommandGroup.js';
import type { ActionReport, ListedMessage } from '../../../src/cli/dlqCommands.js';
import type { EditReport } from '../../../src/cli/editResubmit.js';
import { editReportLine } from '../../../src/cli/editResubmitCommand.js';
import type { FailureGroup } from '../../../src/cli/failureGroups.js';
import { groupReportLine, groupsTable } from '../../../src/cli/groupsCommands.js';
import type { OperatorActionDocument } from '../../../src/cli/operatorAction.js';
import { outboxReportLine, outboxTable } from '../../../src/cli/outboxCommandGroup.js';
import { parkedReportLine, parkedTable } from '../../../src/cli/parkedCommandGroup.js';
import { shipmentReportLine, shipmentTable } from '../../../src/cli/shipmentCommands.js';
import { escapeControls } from '../../../src/cli/terminalText.js';
import { traceText } from '../../../src/cli/traceCommand.js';

// Whatever a sender puts in an id, subject, reason, description or body field, a line of human output
// stays one line, and nothing in it drives the terminal. The tool's io escapes controls but the newline
// (escapeControls), so what reaches the terminal is printed(x) below.
const printed = (text: string) => escapeControls(text);
const forged = 'x\n     42  forged-id  resubmitted  all good\r\u001b[2K\u2028\u2029\u0085end';
const at = '2026-12-04T10:00:00.000Z';

/** Every human output path, with the sender's text `s` in every field a sender (or the broker, from a sender's text) sets. */
const paths: Record<string, { lines: number; render: (s: string) => string }> = {
  'dlq list table': {
    lines: 3,
    render: (s) =>
      deadLetterTable([
        {
          sequenceNumber: 1,
          messageId: s,
          dedupKey: s,
          deadLetterReason: s,
          deadLetterErrorDescription: s,
          enqueuedTimeUtc: at,
          store: { kind: 'invalid', detail: s },
        } as ListedMessage,
      ]),
  },
  'dlq resubmit/purge report': {
    lines: 1,
    render: (s) => deadLetterReportLine({ sequenceNumber: 1, messageId: s, outcome: 'refused', copyMessageId: s, detail: s } as ActionReport),
  },
  'resubmit --edit report': {
    lines: 1,
    render: (s) => editReportLine({ sequenceNumber: 1, messageId: s, outcome: 'refused', copyMessageId: s, detail: s } as EditReport),
  },
  'parked list table': {
    lines: 3,
    render: (s) => parkedTable([{ orderId: s, id: s, state: 'rejected', messageType: s, messageId: s, dedupKey: s, parkedAt: at, reason: s, description: s }]),
  },
  'parked resubmit/discard report': {
    lines: 1,
    render: (s) => parkedReportLine({ orderId: s, id: s, messageId: s, dedupKey: s, outcome: 'refused', copyMessageId: s, detail: s }),
  },
  'outbox list table': {
    lines: 3,
    render: (s) => outboxTable([{ orderId: s, id: s, state: 'failed', eventType: s, destination: s, messageId: s, createdAt: at, reason: s, detail: s }]),
  },
  'outbox requeue report': { lines: 1, render: (s) => outboxReportLine({ orderId: s, id: s, messageId: s, outcome: 'failed', detail: s }) },
  'shipments list table': {
    lines: 3,
    render: (s) =>
      shipmentTable([
        { orderId: s, id: s, state: 'escalated', idempotencyKey: s, owner: s, attempt: 1, reconcileAttempts: 1, leaseExpiresAt: at, shipmentId: s, reason: s },
      ]),
  },
  'shipments resolve report': { lines: 1, render: (s) => shipmentReportLine({ orderId: s, id: s, outcome: 'refused', detail: s }) },
  'groups table': {
    lines: 3,
    render: (s) =>
      groupsTable([{ id: 'g-0123456789', source: 'dead-letter', entity: s, reason: s, messageType: s, count: 1, oldest: at, newest: at } as FailureGroup]),
  },
  'groups retry report': { lines: 1, render: (s) => groupReportLine({ target: `1 ${s}`, outcome: 'refused', detail: s }) },
  'trace text': {
    lines: 4,
    render: (s) => traceText({ input: s, orderId: s, traceIds: [], events: [{ at, where: s, what: s, id: s, detail: s }], warnings: [], timedOut: [] }),
  },
  'audit table': {
    lines: 3,
    render: (s) =>
      auditTable([
        {
          id: 'a-1',
          orderId: '#operator-actions-2026-12',
          docType: 'operator-action',
          at,
          command: s,
          kind: 'changes',
          targets: [s],
          options: {},
          scope: {},
          operator: { name: s, source: 'operator-flag' },
          why: s,
          ticket: s,
          state: 'finished',
          exitCode: 0,
          ttl: 60,
        } as OperatorActionDocument,
      ]),
  },
};

// eslint-disable-next-line no-control-regex
const terminalControls = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

describe.each(Object.entries(paths))('%s', (_name, { lines, render }) => {
  it('keeps a forged line break and terminal escapes inside their line', () => {
    const out = printed(render(forged));
    expect(out.split('\n')).toHaveLength(lines);
    expect(out).not.toMatch(terminalControls);
  });

  test.prop([fc.string({ unit: fc.constantFrom('a', ' ', '\n', '\r', '\u001b', '[', '\u0085', '\u009b', '\u2028', '\u2029', '\u202e', '\u0000') })])(
    'never prints an extra line or a control for any text a sender sets',
    (s) => {
      const out = printed(render(s));
      expect(out.split('\n')).toHaveLength(lines);
      expect(out).not.toMatch(terminalControls);
    },
  );
});

it('prints an error that repeats the text it was given on one line', async () => {
  const err: string[] = [];
  const code = await runDlqCli(['groups', 'retry', 'g-x\nerror: forged'], { stdout: () => undefined, stderr: (t) => err.push(t), env: {} });
  expect(code).toBe(2);
  const last = err.at(-1) ?? '';
  expect(last).toMatch(/^error: --group "g-x\\u000aerror: forged" is not a failure group id/);
  expect(last.split('\n')).toHaveLength(1);
});
