import { describe, expect, it } from 'vitest';
import {
  OperatorActionError,
  actionsInWindow,
  finishedAction,
  justificationProblem,
  operatorActionDocument,
  operatorActionPartition,
  operatorActionPartitionsBetween,
  principalOfToken,
  resolveOperator,
} from '../../../src/cli/operatorAction.js';

const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const at = Date.parse('2026-12-03T08:00:00Z');

describe('operatorActionPartition', () => {
  it('names the UTC month', () => {
    expect(operatorActionPartition(Date.parse('2026-12-31T23:59:59Z'))).toBe('#operator-actions-2026-12');
    expect(operatorActionPartition(Date.parse('2027-01-01T00:00:00Z'))).toBe('#operator-actions-2027-01');
  });
});

describe('operatorActionPartitionsBetween', () => {
  it('lists every month the window touches, across a year end', () => {
    expect(operatorActionPartitionsBetween(Date.parse('2026-11-20T00:00:00Z'), Date.parse('2027-01-02T00:00:00Z'))).toEqual([
      '#operator-actions-2026-11',
      '#operator-actions-2026-12',
      '#operator-actions-2027-01',
    ]);
  });
  it('refuses a window wider than the cap, and one that ends before it starts', () => {
    expect(() => operatorActionPartitionsBetween(Date.parse('2020-01-01T00:00:00Z'), Date.parse('2026-01-01T00:00:00Z'))).toThrow(/more than 60 months/);
    expect(() => operatorActionPartitionsBetween(at, at - 1)).toThrow(OperatorActionError);
  });
});

describe('principalOfToken', () => {
  it('reads oid, upn and tid from the payload', () => {
    expect(principalOfToken(jwt({ oid: 'o-1', upn: 'ada@contoso.com', tid: 't-1' }))).toEqual({
      objectId: 'o-1',
      principalName: 'ada@contoso.com',
      tenantId: 't-1',
    });
  });
  it('takes preferred_username, or a service principal appid, when there is no upn', () => {
    expect(principalOfToken(jwt({ oid: 'o-1', preferred_username: 'ada' }))?.principalName).toBe('ada');
    expect(principalOfToken(jwt({ oid: 'o-2', appid: 'app-1' }))?.principalName).toBe('app-1');
  });
  it('gives nothing for what is not a JWT with claims, or is oversized', () => {
    expect(principalOfToken('opaque-token')).toBeUndefined();
    expect(principalOfToken('a.!!!.c')).toBeUndefined();
    expect(principalOfToken(jwt({ sub: 'x' }))).toBeUndefined();
    expect(principalOfToken(jwt({ oid: 'o'.repeat(20_000) }))).toBeUndefined();
    expect(principalOfToken(jwt({ oid: 'x'.repeat(300) }))).toBeUndefined();
  });
});

describe('resolveOperator', () => {
  it('prefers the credential, keeping --operator as what the person claimed', () => {
    expect(resolveOperator({ token: { objectId: 'o-1', principalName: 'ada@contoso.com' }, operatorFlag: 'ada', osUser: 'root' })).toEqual({
      name: 'ada@contoso.com',
      source: 'credential',
      objectId: 'o-1',
      principalName: 'ada@contoso.com',
      claimed: 'ada',
    });
  });
  it('takes --operator, then the OS user, when no credential is used', () => {
    expect(resolveOperator({ operatorFlag: ' bob ', osUser: 'root' })).toEqual({ name: 'bob', source: 'operator-flag' });
    expect(resolveOperator({ osUser: 'root' })).toEqual({ name: 'root', source: 'os-user' });
  });
  it('asks for --operator when nobody can be named', () => {
    expect(() => resolveOperator({ osUser: '  ' })).toThrow(/give --operator <name>/);
  });
});

describe('justificationProblem', () => {
  it('wants --why or --ticket for a destructive command only', () => {
    expect(justificationProblem('destructive', undefined, undefined)).toMatch(/--why <text> or --ticket <id>/);
    expect(justificationProblem('destructive', ' ', undefined)).toMatch(/--why/);
    expect(justificationProblem('destructive', undefined, 'INC-1')).toBeUndefined();
    expect(justificationProblem('destructive', 'poison message', undefined)).toBeUndefined();
    expect(justificationProblem('changes', undefined, undefined)).toBeUndefined();
  });
  it('bounds both', () => {
    expect(justificationProblem('changes', 'w'.repeat(501), undefined)).toMatch(/--why is longer than 500/);
    expect(justificationProblem('changes', undefined, 't'.repeat(101))).toMatch(/--ticket is longer than 100/);
  });
});

describe('operatorActionDocument', () => {
  const record = operatorActionDocument({
    id: 'a-1',
    atEpochMs: at,
    command: 'purge',
    kind: 'destructive',
    targets: ['42'],
    options: { yes: true },
    scope: { queue: 'orders' },
    operator: { name: 'bob', source: 'operator-flag' },
    why: ' poison ',
    ticket: ' ',
    ttlSeconds: 2_592_000,
  });
  it('lives in its month partition, with a TTL, started', () => {
    expect(record).toMatchObject({
      id: 'a-1',
      orderId: '#operator-actions-2026-12',
      docType: 'operator-action',
      at: '2026-12-03T08:00:00.000Z',
      state: 'started',
      ttl: 2_592_000,
      why: 'poison',
    });
    expect(record).not.toHaveProperty('ticket');
  });
  it('is marked finished with the exit code', () => {
    expect(finishedAction(record, at + 5_000, 1)).toMatchObject({ state: 'finished', finishedAt: '2026-12-03T08:00:05.000Z', exitCode: 1 });
  });
  it('is listed when inside the window, oldest first', () => {
    const later = { ...record, id: 'a-2', at: '2026-12-03T09:00:00.000Z' };
    const earlier = { ...record, id: 'a-0', at: '2026-12-03T07:00:00.000Z' };
    expect(actionsInWindow([later, record, earlier], at - 3_600_000, at).map((r) => r.id)).toEqual(['a-0', 'a-1']);
  });
});
