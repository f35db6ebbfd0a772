import { describe, expect, it } from 'vitest';
import { maxClientPrincipalHeaderLength, maxPrincipalIdLength, readIntakeCaller } from '../../../src/intake/intakeCaller.js';

// The edges of what the entra scope takes as a caller: the bounds themselves, the whitespace the
// platform or a proxy may leave around an id, and claims arrays holding values that are not claims.
const oid = '5f2b6a0e-7c1d-4a8e-9b3f-2d1c0e9a8b7c';
const principal = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
const read = (values: Record<string, string>) => readIntakeCaller(new Headers(values), 'entra');
const detailOf = (answer: unknown) => (answer as { body: { detail: string } }).body.detail;

describe('readIntakeCaller at its edges', () => {
  it('takes x-ms-client-principal-id with surrounding whitespace as the id it holds', () => {
    // Fetch's Headers trims values already; a host's header map need not.
    const untrimmed = { get: (name: string) => (name === 'x-ms-client-principal-id' ? `\t${oid}  ` : null) };
    expect(readIntakeCaller(untrimmed, 'entra')).toEqual({ kind: 'entra', objectId: oid });
  });

  it('takes an oid claim with surrounding whitespace as the id it holds', () => {
    expect(read({ 'x-ms-client-principal': principal({ claims: [{ typ: 'oid', val: ` ${oid}\n` }] }) })).toEqual({ kind: 'entra', objectId: oid });
  });

  it('takes an id of exactly the bound, and refuses an empty one', () => {
    const longest = 'p'.repeat(maxPrincipalIdLength);
    expect(read({ 'x-ms-client-principal-id': longest })).toEqual({ kind: 'entra', objectId: longest });
    expect(read({ 'x-ms-client-principal': principal({ claims: [{ typ: 'oid', val: longest }] }) })).toEqual({ kind: 'entra', objectId: longest });
    const empty = read({ 'x-ms-client-principal': principal({ claims: [{ typ: 'oid', val: '  ' }] }) });
    expect(detailOf(empty)).toContain(`the oid claim of x-ms-client-principal is not 1 to ${maxPrincipalIdLength} visible ASCII characters`);
    const spaced = read({ 'x-ms-client-principal-id': 'a b' });
    expect(detailOf(spaced)).toContain(`x-ms-client-principal-id is not 1 to ${maxPrincipalIdLength} visible ASCII characters`);
  });

  it('reads a principal header of exactly the bound rather than refusing it as too long', () => {
    const header = 'A'.repeat(maxClientPrincipalHeaderLength);
    const answer = read({ 'x-ms-client-principal': header });
    expect(detailOf(answer)).toContain('x-ms-client-principal is not base64-encoded JSON');
    expect(detailOf(answer)).not.toContain('is over');
  });

  it('refuses a principal that decodes to null as one without claims, not with an error', () => {
    expect(detailOf(read({ 'x-ms-client-principal': principal(null) }))).toContain('x-ms-client-principal has no claims array');
  });

  it('passes over nulls and other non-claims in the claims array to the oid claim', () => {
    const sent = principal({ claims: [null, 'oid', 7, { typ: 'oid', val: oid }] });
    expect(read({ 'x-ms-client-principal': sent })).toEqual({ kind: 'entra', objectId: oid });
  });

  it('answers 401 with the title "No authenticated caller" and a Bearer challenge', () => {
    expect(read({})).toMatchObject({
      status: 401,
      headers: { 'WWW-Authenticate': 'Bearer' },
      body: { title: 'No authenticated caller', type: 'urn:idempotent-order-consumer:problem:caller-unauthenticated' },
    });
  });
});
