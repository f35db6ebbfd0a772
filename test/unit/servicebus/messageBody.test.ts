import { describe, expect, it } from 'vitest';
import { decodeJsonBody } from '../../../src/servicebus/index.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('decodeJsonBody: the size limit', () => {
  it('takes a body of exactly the limit and refuses one byte more, in every form the host hands it', () => {
    const text = JSON.stringify({ a: 'x'.repeat(92) }); // 100 bytes
    expect(text).toHaveLength(100);
    expect(decodeJsonBody(text, 100)).toEqual({ a: 'x'.repeat(92) });
    expect(decodeJsonBody(bytes(text), 100)).toEqual({ a: 'x'.repeat(92) });
    expect(decodeJsonBody(JSON.parse(text), 100)).toEqual({ a: 'x'.repeat(92) });
    expect(() => decodeJsonBody(text, 99)).toThrow('MessageTooLarge: the body has 100 bytes; the limit is 99');
    expect(() => decodeJsonBody(bytes(text), 99)).toThrow('MessageTooLarge: the body has 100 bytes; the limit is 99');
    expect(() => decodeJsonBody(JSON.parse(text), 99)).toThrow('MessageTooLarge: the body has 100 bytes; the limit is 99');
  });

  it('counts bytes in UTF-8, not characters', () => {
    expect(() => decodeJsonBody('"éé"', 5)).toThrow('MessageTooLarge: the body has 6 bytes; the limit is 5');
    expect(decodeJsonBody('"éé"', 6)).toBe('éé');
  });
});

describe('decodeJsonBody: what is not a JSON body', () => {
  it('calls a missing body empty, whether undefined or null', () => {
    expect(() => decodeJsonBody(undefined, 1024)).toThrow(/^InvalidJson: the body is empty$/);
    expect(() => decodeJsonBody(null, 1024)).toThrow(/^InvalidJson: the body is empty$/);
  });

  it('quotes a text that is not JSON, cut at 40 characters', () => {
    expect(() => decodeJsonBody('nope', 1024)).toThrow(/^InvalidJson: the body is not JSON \(.+\): "nope"$/);
    const long = `not json ${'y'.repeat(100)}`;
    expect(() => decodeJsonBody(long, 1024)).toThrow(new RegExp(`: "${long.slice(0, 40)}…"$`));
    expect(() => decodeJsonBody('x'.repeat(40), 1024)).toThrow(new RegExp(`: "${'x'.repeat(40)}"$`));
    expect(() => decodeJsonBody(bytes('{"a":'), 1024)).toThrow(/^InvalidJson: .*: "\{\\"a\\":"$/);
  });
});

describe('decodeJsonBody: the depth count', () => {
  const siblings = (n: number, open: string, close: string) => `[${Array.from({ length: n }, () => `${open}${close}`).join(',')}]`;

  it('counts depth, not brackets: a hundred empty arrays or objects side by side are two deep', () => {
    expect(decodeJsonBody(siblings(100, '[', ']'), 4096)).toHaveLength(100);
    expect(decodeJsonBody(siblings(100, '{', '}'), 4096)).toHaveLength(100);
    expect(decodeJsonBody(`{${Array.from({ length: 100 }, (_, i) => `"k${i}":{"a":[]}`).join(',')}}`, 8192)).toBeDefined();
  });

  it('skips what strings hold, escaped quotes included, and counts again after a string ends', () => {
    const inString = JSON.stringify({ note: `a"${'['.repeat(100)}`, path: 'C:\\', more: '{'.repeat(100) });
    expect(decodeJsonBody(inString, 4096)).toMatchObject({ path: 'C:\\' });
    const afterString = `["]", ${'['.repeat(65)}${']'.repeat(65)}]`;
    expect(() => decodeJsonBody(afterString, 4096)).toThrow(/^BodyTooDeep: /);
    expect(() => decodeJsonBody(`["\\\\", ${'['.repeat(65)}${']'.repeat(65)}]`, 4096)).toThrow(/^BodyTooDeep: /);
  });

  it('measures a parsed body through objects and arrays alike, and not through primitives', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 64; i += 1) deep = i % 2 === 0 ? { child: deep } : [deep];
    expect(decodeJsonBody(deep, 1_000_000)).toBeDefined();
    expect(() => decodeJsonBody({ wrap: deep }, 1_000_000)).toThrow(/^BodyTooDeep: the body nests deeper than 64 levels$/);
    expect(decodeJsonBody([1, 'a', null, true], 1024)).toEqual([1, 'a', null, true]);
  });
});
