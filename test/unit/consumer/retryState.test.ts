import { describe, expect, it } from 'vitest';
import { readRetryState, signRetryState } from '../../../src/consumer/index.js';
import { envelopeFromTriggerMetadata } from '../../../src/servicebus/index.js';

// Retry state is read back from a message anyone with Send rights can write: only a signature the app
// made verifies, anything else is a first attempt, said so, and nothing here may throw.
const key = 'test-retry-state-signing-key-0123456789abcdef';
const copy = { messageId: '~hmac:ab~retry-2', dedupKey: 'pay-1' };
const firstFailureAt = '2026-12-01T10:00:00.000Z';
const nowMs = Date.parse('2026-12-01T11:00:00.000Z');
const state = { attempt: 2, firstFailureAtEpochMs: Date.parse(firstFailureAt), root: 'msg-1' };

function envelope(properties: Record<string, unknown>, messageId = copy.messageId) {
  return envelopeFromTriggerMetadata({ messageId, applicationProperties: properties });
}

function signed(overrides: Record<string, unknown> = {}, signingKey = key): Record<string, unknown> {
  return {
    'retry-attempt': state.attempt,
    'retry-first-failure-at': firstFailureAt,
    'retry-of': state.root,
    'retry-signature': signRetryState(signingKey, copy, state),
    ...overrides,
  };
}

describe('the retry state signature', () => {
  it('is the same bytes this release and the one before wrote: a copy in its delayed retries across a deploy still verifies', () => {
    // Recorded once (HMAC-SHA256 over ["retry-state-v1", MessageId, dedup key, attempt, ISO first failure, root], base64url).
    expect(signRetryState(key, copy, state)).toBe('EyU3gOrIOd4K9okZk9tl5199u4UYs2weGfrL8Yu7S9s');
  });

  it('covers the copy it is written on: another MessageId or dedup key, another attempt, first failure or root signs differently', () => {
    const base = signRetryState(key, copy, state);
    expect(signRetryState(key, { ...copy, messageId: 'other' }, state)).not.toBe(base);
    expect(signRetryState(key, { ...copy, dedupKey: 'other' }, state)).not.toBe(base);
    expect(signRetryState(key, copy, { ...state, attempt: 3 })).not.toBe(base);
    expect(signRetryState(key, copy, { ...state, firstFailureAtEpochMs: state.firstFailureAtEpochMs + 1 })).not.toBe(base);
    expect(signRetryState(key, copy, { ...state, root: 'msg-2' })).not.toBe(base);
    expect(signRetryState('another key', copy, state)).not.toBe(base);
  });
});

describe('reading the retry state of a delivery', () => {
  it('a message without retry properties is a first attempt, with nothing to say', () => {
    expect(readRetryState(envelope({}), copy.dedupKey, { current: key }, nowMs)).toEqual({ attempt: 0 });
  });

  it('a copy the app signed is where it says it stands', () => {
    expect(readRetryState(envelope(signed()), copy.dedupKey, { current: key }, nowMs)).toEqual({
      attempt: 2,
      firstFailureAtEpochMs: state.firstFailureAtEpochMs,
      root: 'msg-1',
    });
  });

  it('a first failure later than now (another instance’s clock) is taken as now', () => {
    const ahead = { ...state, firstFailureAtEpochMs: nowMs + 5_000 };
    const properties = {
      ...signed(),
      'retry-first-failure-at': new Date(ahead.firstFailureAtEpochMs).toISOString(),
      'retry-signature': signRetryState(key, copy, ahead),
    };
    expect(readRetryState(envelope(properties), copy.dedupKey, { current: key }, nowMs)).toMatchObject({ attempt: 2, firstFailureAtEpochMs: nowMs });
  });

  it('a copy signed without a root verifies with an empty one', () => {
    const rootless = { ...state, root: '' };
    const properties: Record<string, unknown> = { ...signed(), 'retry-signature': signRetryState(key, copy, rootless) };
    delete properties['retry-of'];
    expect(readRetryState(envelope(properties), copy.dedupKey, { current: key }, nowMs)).toEqual({
      attempt: 2,
      firstFailureAtEpochMs: state.firstFailureAtEpochMs,
      root: '',
    });
  });

  it.each([
    ['retry-attempt', 2],
    ['retry-first-failure-at', firstFailureAt],
    ['retry-of', 'msg-1'],
    ['retry-signature', 'x'],
  ])('any one retry property alone (%s) is a first attempt, said so', (name, value) => {
    const read = readRetryState(envelope({ [name]: value }), copy.dedupKey, { current: key }, nowMs);
    expect(read.attempt).toBe(0);
    expect(read.unverified).toMatch(
      /^the message has retry properties but (carries no retry-signature|has a retry-signature that does not verify): treated as a first attempt$/,
    );
  });

  it('says which: no signature, or one that does not verify', () => {
    const { 'retry-signature': _s, ...unsigned } = signed();
    expect(readRetryState(envelope(unsigned), copy.dedupKey, { current: key }, nowMs).unverified).toContain('carries no retry-signature');
    expect(readRetryState(envelope(signed({ 'retry-attempt': 3 })), copy.dedupKey, { current: key }, nowMs).unverified).toContain(
      'has a retry-signature that does not verify',
    );
  });

  it.each([
    ['a forged first failure (a year ahead)', signed({ 'retry-first-failure-at': '2027-12-01T10:00:00.000Z' })],
    ['a first failure that is no time', signed({ 'retry-first-failure-at': 'soon' })],
    ['an attempt that is no number', signed({ 'retry-attempt': 'two' })],
    ['a shorter signature (no throw on length)', signed({ 'retry-signature': 'EyU3' })],
    ['a signature of another key', signed({}, 'someone else')],
  ])('%s is a first attempt', (_what, properties) => {
    const read = readRetryState(envelope(properties), copy.dedupKey, { current: key }, nowMs);
    expect(read).toMatchObject({ attempt: 0, unverified: expect.stringContaining('does not verify') });
  });

  it.each([0, -1])('a signed attempt of %i is a first attempt (only the app’s copies count, from 1)', (attempt) => {
    const odd = { ...state, attempt };
    const properties = signed({ 'retry-attempt': attempt, 'retry-signature': signRetryState(key, copy, odd) });
    expect(readRetryState(envelope(properties), copy.dedupKey, { current: key }, nowMs)).toMatchObject({ attempt: 0, unverified: expect.any(String) });
  });

  it('a state moved onto another message, or read without a MessageId or a dedup key, does not verify', () => {
    expect(readRetryState(envelope(signed(), 'another-id'), copy.dedupKey, { current: key }, nowMs).attempt).toBe(0);
    expect(readRetryState(envelope(signed()), 'another-key', { current: key }, nowMs).attempt).toBe(0);
    expect(readRetryState(envelopeFromTriggerMetadata({ applicationProperties: signed() }), copy.dedupKey, { current: key }, nowMs).attempt).toBe(0);
    expect(readRetryState(envelope(signed()), undefined, { current: key }, nowMs).attempt).toBe(0);
  });

  it('during a rotation, a copy signed with the previous key verifies; with a third key it does not', () => {
    const rotated = { current: 'the new key', previous: key };
    expect(readRetryState(envelope(signed()), copy.dedupKey, rotated, nowMs).attempt).toBe(2);
    expect(readRetryState(envelope(signed({}, 'a third key')), copy.dedupKey, rotated, nowMs).attempt).toBe(0);
    expect(readRetryState(envelope(signed({}, 'the new key')), copy.dedupKey, { current: 'the new key', previous: 'the new key' }, nowMs).attempt).toBe(2);
  });
});
