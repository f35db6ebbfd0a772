import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { escapeControls, oneLine, shellWord } from '../../../src/cli/terminalText.js';

const ids = [
  'plain-id~resubmit-1',
  'o-1/p-2',
  'a|b',
  'with space',
  '$(touch pwned)',
  "it's",
  '"quoted"',
  'back`tick`',
  '\u001b]0;pwned\u0007\u001b[2J',
  'line\nbreak',
  'c1\u009bcsi',
  'rtl\u202eevil',
  'line\u2028separator',
  '',
];

describe('shellWord', () => {
  it('leaves plain ids as they are', () => {
    expect(shellWord('o-1/p-2:3@x')).toBe('o-1/p-2:3@x');
  });

  it('quotes ids holding |, spaces, $, quotes', () => {
    expect(shellWord('a|b')).toBe("'a|b'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord('\u001b[2J')).toBe("$'\\x1b[2J'");
  });

  it.each(ids)('%j pastes into bash as the same word', (id) => {
    const echoed = execFileSync('bash', ['-c', `printf '%s' ${shellWord(id)}`], {
      encoding: 'utf8',
      env: { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', PATH: process.env.PATH },
    });
    expect(echoed).toBe(id);
  });
});

describe('escapeControls', () => {
  it('prints controls, DEL, C1 and bidi overrides as \\uXXXX, keeping the newline', () => {
    expect(escapeControls('a\u001b[31mb\u007f\u009b\u202e\nnext')).toBe('a\\u001b[31mb\\u007f\\u009b\\u202e\nnext');
  });

  it('keeps JSON output valid and equal', () => {
    const json = JSON.stringify({ id: 'c1\u009bcsi\u202e' });
    expect(JSON.parse(escapeControls(json))).toEqual({ id: 'c1\u009bcsi\u202e' });
  });
});

describe('oneLine', () => {
  it('escapes line breaks (the newline, U+2028, U+2029) as well as the controls, keeping JSON string content equal', () => {
    expect(oneLine('a\nb\u2028c\u2029d\u001b[2J')).toBe('a\\u000ab\\u2028c\\u2029d\\u001b[2J');
    expect(JSON.parse(`"${oneLine('a\nb\u2028')}"`)).toBe('a\nb\u2028');
  });
});
