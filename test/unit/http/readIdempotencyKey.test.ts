import { describe, expect, it } from 'vitest';
import { readIdempotencyKey } from '../../../src/http/readIdempotencyKey.js';

// The Idempotency-Key as clients send it: Stripe's bare token or the IETF draft's sf-string, one key either way.
const keyOf = (value: string) => {
  const read = readIdempotencyKey(value);
  if (read.kind !== 'key') throw new Error(`refused ${JSON.stringify(value)}: ${JSON.stringify(read)}`);
  return read.key;
};
const refusalOf = (value: string | null) => {
  const read = readIdempotencyKey(value);
  if (read.kind === 'key') throw new Error(`accepted ${JSON.stringify(value)} as ${read.key}`);
  return read;
};

describe('readIdempotencyKey', () => {
  it("takes a bare token as Stripe's clients send it", () => {
    expect(keyOf('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
  });

  it('reads a bare token and the sf-string holding it as the same key', () => {
    expect(keyOf('abc')).toBe(keyOf('"abc"'));
    expect(keyOf('"abc"')).toBe('abc');
    expect(keyOf('"a \\"quoted\\" key"')).toBe('a "quoted" key');
  });

  it('takes in a bare token every visible ASCII character but " \\ and the comma', () => {
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
      .filter((c) => !'"\\,'.includes(c))
      .join('');
    expect(keyOf(visible)).toBe(visible);
    expect(keyOf('k')).toBe('k');
  });

  it('takes a key of 255 characters in either form and refuses 256', () => {
    expect(keyOf('k'.repeat(255))).toHaveLength(255);
    expect(keyOf(`"${'k'.repeat(255)}"`)).toHaveLength(255);
    for (const value of ['k'.repeat(256), `"${'k'.repeat(256)}"`]) {
      expect(refusalOf(value)).toEqual({
        kind: 'malformed',
        title: 'Idempotency-Key header too long',
        detail: 'the Idempotency-Key is 256 characters; at most 255 are allowed',
      });
    }
  });

  it('takes no header, or one of white space, for no key', () => {
    expect(refusalOf(null)).toEqual({ kind: 'missing' });
    expect(refusalOf('   ')).toEqual({ kind: 'missing' });
  });

  it('refuses an empty sf-string', () => {
    expect(refusalOf('""')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('empty') });
  });

  it('refuses an sf-string of spaces only, as a header of spaces is no key: clients that send a blank key never share one', () => {
    for (const value of ['" "', '"   "']) {
      expect(refusalOf(value)).toEqual({
        kind: 'malformed',
        title: 'Idempotency-Key header malformed',
        detail: 'the Idempotency-Key is an sf-string of spaces only; send a key, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"',
        // The previous release took it as a key: its requests' retries are answered from what it stored.
        previousReleaseKey: value.slice(1, -1),
      });
    }
    expect(keyOf('" a "')).toBe(' a ');
  });

  it('refuses several values, as two headers or a list arrive, in either form', () => {
    for (const value of ['abc, abc', 'abc,def', '"abc", "abc"', '"a",b', 'a, "b"']) {
      expect(refusalOf(value), value).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('several values') });
    }
  });

  it('refuses a control character anywhere, naming it and where it is', () => {
    expect(refusalOf('ab\tc')).toEqual({
      kind: 'malformed',
      title: 'Idempotency-Key header malformed',
      detail: 'the Idempotency-Key holds a control character (U+0009) at position 3; a key is visible ASCII only',
    });
    expect(refusalOf('"a\u0001"')).toMatchObject({ detail: expect.stringContaining('control character (U+0001) at position 3') });
    expect(refusalOf('a\u007f')).toMatchObject({ detail: expect.stringContaining('control character (U+007F) at position 2') });
  });

  it('refuses a bare value with a space, a quote or a backslash, and characters outside ASCII, saying which', () => {
    expect(refusalOf('a b')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('a space at position 2') });
    expect(refusalOf('a"b')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('" at position 2') });
    expect(refusalOf('a\\b')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('\\ at position 2') });
    expect(refusalOf('café')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('U+00E9 at position 4') });
  });

  it('refuses a quoted value that is not one well-formed sf-string', () => {
    for (const value of ['"abc', '"a"b"', '"a\\x"', '"a\\"', '"é"']) {
      expect(refusalOf(value), value).toMatchObject({
        kind: 'malformed',
        title: 'Idempotency-Key header malformed',
        detail: expect.stringContaining('sf-string'),
      });
    }
  });

  it('refuses an empty sf-string, saying so and showing a key', () => {
    expect(refusalOf('""')).toEqual({
      kind: 'malformed',
      title: 'Idempotency-Key header malformed',
      detail: 'the Idempotency-Key is an empty sf-string; send a key, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"',
    });
  });

  it('refuses a control character in the first position and at the end of the C1 range', () => {
    expect(refusalOf('\u0001abc')).toMatchObject({ detail: expect.stringContaining('control character (U+0001) at position 1') });
    expect(refusalOf('ab\u009f')).toMatchObject({ detail: expect.stringContaining('control character (U+009F) at position 3') });
  });

  it('refuses a bare value whose first character is not allowed in a bare key', () => {
    expect(refusalOf('\\abc')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('holds \\ at position 1') });
    expect(refusalOf('ébc')).toMatchObject({ kind: 'malformed', detail: expect.stringContaining('the non-ASCII U+00E9 at position 1') });
  });

  it('takes a comma inside an sf-string, after an escaped quote too, as part of one key', () => {
    expect(keyOf('"a,b"')).toBe('a,b');
    expect(keyOf('"a\\",b"')).toBe('a",b');
  });
});
