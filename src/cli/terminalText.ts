/**
 * Text the tool prints comes from senders (ids, keys, reasons, bodies): nothing in it may drive the
 * terminal. C0 controls (but the newline that ends our own lines), DEL, C1 controls (0x9b is CSI on
 * some terminals) and the bidirectional overrides are printed as `\uXXXX`, which inside a JSON string
 * is the same character, so `--json` output stays valid and equal.
 */
// eslint-disable-next-line no-control-regex
const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function escapeControls(text: string): string {
  return text.replace(unsafe, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// The line breaks a value may hold: the newline, and the separators some viewers break lines at.
const lineBreaks = /[\n\u2028\u2029]/g;

/**
 * A value inside one line of human output (a table cell, a report's detail, a warning): its line
 * breaks are escaped too, so no sender can end the line and forge the next one.
 */
export function oneLine(text: string): string {
  return escapeControls(text).replace(lineBreaks, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// eslint-disable-next-line no-control-regex
const needsAnsiC = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/**
 * An id as one shell word that pastes back unchanged: as it is when it holds only characters no shell
 * treats specially, in single quotes otherwise, and as `$'...'` with `\xHH`/`\uHHHH` escapes when it
 * holds a control character (bash, zsh, ksh and POSIX.1-2024 sh read that form).
 */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9_@%+=:,./~-]+$/.test(text)) return text;
  if (!needsAnsiC.test(text)) return `'${text.replaceAll("'", "'\\''")}'`;
  let quoted = "$'";
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    if (c === "'" || c === '\\') quoted += `\\${c}`;
    else if (code < 0x20 || code === 0x7f) quoted += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (needsAnsiC.test(c)) quoted += `\\u${code.toString(16).padStart(4, '0')}`;
    else quoted += c;
  }
  return `${quoted}'`;
}
