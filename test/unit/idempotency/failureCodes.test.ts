import { describe, expect, it } from 'vitest';
import { PermanentMessageError, failureCodes, permanentFailureCodes } from '../../../src/idempotency/index.js';

describe('failureCodes', () => {
  it('hands a domain its codes as the plain strings, which a PermanentMessageError carries as they are', () => {
    const codes = failureCodes(['TooLate', 'TooEarly']);
    expect(codes).toEqual({ TooLate: 'TooLate', TooEarly: 'TooEarly' });
    expect(Object.isFrozen(codes)).toBe(true);
    const error = new PermanentMessageError(codes.TooLate, 'after the cut-off', 'k');
    expect([error.code, error.message]).toEqual(['TooLate', 'TooLate: after the cut-off (dedup key "k")']);
  });

  it.each(permanentFailureCodes)('refuses %s, a code the core decides itself: one code, one meaning', (code) => {
    expect(() => failureCodes(['TooLate', code])).toThrow(new RangeError(`failure code ${code} is the core's own; a domain declares only its own codes`));
  });

  it.each(['', 'tooLate', 'Too Late', 'Too-Late', 'TooLate2'])('refuses %j, which is not an identifier the runbook could name', (code) => {
    expect(() => failureCodes([code])).toThrow(new RangeError(`failure code ${JSON.stringify(code)} is not an identifier (letters, starting with a capital)`));
  });

  it('keeps a code no one declared from compiling (checked by the type-check: the directive fails it when the line compiles)', () => {
    // @ts-expect-error CurrencyMismatch is the orders' code: it comes from their failureCodes, never as a bare string
    const error = new PermanentMessageError('CurrencyMismatch', 'in another currency');
    expect(error.code).toBe('CurrencyMismatch');
  });
});
