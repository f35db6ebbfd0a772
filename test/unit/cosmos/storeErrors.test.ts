import { describe, expect, it } from 'vitest';
import { classifyStoreFailure, isLoopbackEndpoint, statusCodeOf } from '../../../src/cosmos/index.js';
import { PermanentMessageError, TransientStoreError } from '../../../src/idempotency/index.js';

describe('classifyStoreFailure', () => {
  it.each([408, 429, 449, 500, 503])('treats %i as transient', (code) => {
    const error = classifyStoreFailure({ code, message: 'x' }, 'create');
    expect(error).toBeInstanceOf(TransientStoreError);
    expect((error as TransientStoreError).statusCode).toBe(code);
    expect(error.message).toContain('(transient');
  });

  it('redelivers what it does not recognise (network errors, 403) rather than lose the message', () => {
    expect(classifyStoreFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'read')).toBeInstanceOf(TransientStoreError);
    expect(classifyStoreFailure({ code: 403 }, 'read').message).toContain('(unexpected, status 403)');
  });

  it('treats 413 (document too large) as permanent', () => {
    expect(classifyStoreFailure({ code: 413 }, 'create')).toBeInstanceOf(PermanentMessageError);
  });

  it('reads the status from ErrorResponse.code or statusCode', () => {
    expect(statusCodeOf({ code: 409 })).toBe(409);
    expect(statusCodeOf({ statusCode: 412 })).toBe(412);
    expect(statusCodeOf({ code: 'ECONNRESET' })).toBeUndefined();
  });
});

describe('isLoopbackEndpoint', () => {
  it.each(['https://localhost:8081/', 'https://127.0.0.1:8081', 'https://127.9.9.9/', 'https://[::1]:8081/'])('says %s is local', (url) => {
    expect(isLoopbackEndpoint(url)).toBe(true);
  });
  it.each(['https://myaccount.documents.azure.com:443/', 'https://10.0.0.1/', 'https://localhost.example.com/'])('says %s is not', (url) => {
    expect(isLoopbackEndpoint(url)).toBe(false);
  });
});
