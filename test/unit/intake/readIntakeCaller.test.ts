import { describe, expect, it } from 'vitest';
import { maxPrincipalIdLength, readIntakeCaller } from '../../../src/intake/intakeCaller.js';

const oid = '5f2b6a0e-7c1d-4a8e-9b3f-2d1c0e9a8b7c';
const principal = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
const headers = (values: Record<string, string>) => new Headers(values);
const detailOf = (answer: unknown) => (answer as { body: { detail: string } }).body.detail;

describe('readIntakeCaller', () => {
  it('takes everyone for the shared scope with shared, whatever principal headers a client sends', () => {
    expect(readIntakeCaller(headers({ 'x-ms-client-principal-id': oid }), 'shared')).toEqual({ kind: 'shared' });
  });

  it('takes the object id claim of x-ms-client-principal, in either claim type, lower-cased', () => {
    for (const typ of ['http://schemas.microsoft.com/identity/claims/objectidentifier', 'oid']) {
      const sent = headers({
        'x-ms-client-principal': principal({
          auth_typ: 'aad',
          claims: [
            { typ: 'name', val: 'x' },
            { typ, val: oid.toUpperCase() },
          ],
        }),
        'x-ms-client-principal-id': 'other',
      });
      expect(readIntakeCaller(sent, 'entra')).toEqual({ kind: 'entra', objectId: oid });
    }
  });

  it('takes x-ms-client-principal-id when the platform sent no claims', () => {
    expect(readIntakeCaller(headers({ 'x-ms-client-principal-id': oid }), 'entra')).toEqual({ kind: 'entra', objectId: oid });
  });

  it('refuses with 401 caller-unauthenticated, naming what is missing or wrong', () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'carries no x-ms-client-principal or x-ms-client-principal-id header'],
      [{ 'x-ms-client-principal': 'not base64 json' }, 'x-ms-client-principal is not base64-encoded JSON'],
      [{ 'x-ms-client-principal': principal({ auth_typ: 'aad' }) }, 'x-ms-client-principal has no claims array'],
      [{ 'x-ms-client-principal': principal({ claims: [{ typ: 'name', val: 'x' }] }) }, 'x-ms-client-principal has no object id (oid) claim'],
      [
        { 'x-ms-client-principal': principal({ claims: [{ typ: 'oid', val: 'a b' }] }) },
        `the oid claim of x-ms-client-principal is not 1 to ${maxPrincipalIdLength} visible ASCII characters`,
      ],
      [
        { 'x-ms-client-principal-id': 'x'.repeat(maxPrincipalIdLength + 1) },
        `x-ms-client-principal-id is not 1 to ${maxPrincipalIdLength} visible ASCII characters`,
      ],
      [{ 'x-ms-client-principal': 'A'.repeat(32 * 1024 + 1) }, 'x-ms-client-principal is over 32768 characters'],
    ];
    for (const [sent, reason] of cases) {
      const answer = readIntakeCaller(headers(sent), 'entra');
      expect(answer, reason).toMatchObject({
        status: 401,
        headers: { 'WWW-Authenticate': 'Bearer' },
        body: { type: 'urn:idempotent-order-consumer:problem:caller-unauthenticated' },
      });
      expect(detailOf(answer)).toContain(reason);
    }
  });
});
