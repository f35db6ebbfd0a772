import { SqlFilterSyntaxError } from './sqlSyntax.js';

export interface Token {
  readonly kind: 'word' | 'string' | 'number' | 'symbol' | 'quoted';
  readonly text: string;
  readonly at: number;
}

const symbols = ['=', '<>', '!=', '<', '<=', '>', '>=', '(', ')', ',', '.', '+', '-', '*', '/', '%'];

/** A filter's text as tokens: words, 'strings' ('' is a quote), numbers, [delimited names] and symbols. */
export function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < expression.length;) {
    const ch = expression[i] ?? '';
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    const token = tokenAt(expression, i);
    tokens.push(token.token);
    i = token.next;
  }
  return tokens;
}

function tokenAt(expression: string, i: number): { readonly token: Token; readonly next: number } {
  const ch = expression[i] ?? '';
  if (ch === "'") return stringAt(expression, i);
  if (ch === '[') return quotedNameAt(expression, i);
  if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(expression[i + 1] ?? '')))
    return matchedAt(expression, i, 'number', /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/);
  if (/[A-Za-z_$]/.test(ch)) return matchedAt(expression, i, 'word', /^[A-Za-z_$][A-Za-z0-9_$]*/);
  return symbolAt(expression, i);
}

function stringAt(expression: string, start: number): { readonly token: Token; readonly next: number } {
  let text = '';
  let i = start + 1;
  for (; ; i += 1) {
    if (i >= expression.length) throw new SqlFilterSyntaxError(expression, 'a string is not closed');
    if (expression[i] === "'" && expression[i + 1] === "'") {
      text += "'";
      i += 1;
    } else if (expression[i] === "'") {
      break;
    } else {
      text += expression[i];
    }
  }
  return { token: { kind: 'string', text, at: i }, next: i + 1 };
}

function quotedNameAt(expression: string, start: number): { readonly token: Token; readonly next: number } {
  const end = expression.indexOf(']', start);
  if (end < 0) throw new SqlFilterSyntaxError(expression, 'a [delimited] name is not closed');
  return { token: { kind: 'quoted', text: expression.slice(start + 1, end), at: start }, next: end + 1 };
}

function matchedAt(expression: string, start: number, kind: 'number' | 'word', pattern: RegExp): { readonly token: Token; readonly next: number } {
  const text = pattern.exec(expression.slice(start))?.[0] ?? expression[start] ?? '';
  return { token: { kind, text, at: start }, next: start + text.length };
}

function symbolAt(expression: string, start: number): { readonly token: Token; readonly next: number } {
  const ch = expression[start] ?? '';
  const two = expression.slice(start, start + 2);
  const symbol = ['<>', '!=', '<=', '>='].includes(two) ? two : ch;
  if (!symbols.includes(symbol)) throw new SqlFilterSyntaxError(expression, `unexpected ${JSON.stringify(ch)} at ${start}`);
  return { token: { kind: 'symbol', text: symbol, at: start }, next: start + symbol.length };
}
