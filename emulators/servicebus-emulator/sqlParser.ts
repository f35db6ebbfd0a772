import { SqlFilterSyntaxError } from './sqlSyntax.js';
import type { ArithmeticOperator, ComparisonOperator, Expression, Predicate } from './sqlSyntax.js';
import { tokenize } from './sqlTokenizer.js';
import type { Token } from './sqlTokenizer.js';

/**
 * A SQL filter as Service Bus parses it, by recursive descent with one function per precedence
 * level, loosest first: OR, AND, NOT, a condition (comparison, IS NULL, IN, LIKE, EXISTS), then
 * the arithmetic: + and -, then *, / and %, then unary minus, then an operand.
 */
export function parseSqlFilter(expression: string): Predicate {
  const cursor = new Cursor(expression, tokenize(expression));
  if (cursor.atEnd()) throw cursor.fail('it is empty');
  const result = parseOr(cursor);
  if (!cursor.atEnd()) throw cursor.fail(`unexpected "${cursor.peek()?.text}" at ${cursor.peek()?.at}`);
  return result;
}

/** Where the parser is in the tokens; the failures it throws name the filter. */
class Cursor {
  position = 0;
  constructor(
    private readonly expression: string,
    private readonly tokens: readonly Token[],
  ) {}

  peek(): Token | undefined {
    return this.tokens[this.position];
  }
  atEnd(): boolean {
    return this.position >= this.tokens.length;
  }
  isWord(word: string): boolean {
    const t = this.peek();
    return t?.kind === 'word' && t.text.toUpperCase() === word;
  }
  isSymbol(symbol: string): boolean {
    const t = this.peek();
    return t?.kind === 'symbol' && t.text === symbol;
  }
  /** Steps over the word if it is next: true when it was there. */
  skipWord(word: string): boolean {
    if (!this.isWord(word)) return false;
    this.position += 1;
    return true;
  }
  take(): Token {
    const t = this.tokens[this.position];
    if (!t) throw this.fail('it ends too early');
    this.position += 1;
    return t;
  }
  expectSymbol(symbol: string): void {
    if (!this.isSymbol(symbol)) throw this.fail(`expected "${symbol}"${this.peek() ? ` at ${this.peek()?.at}` : ' at the end'}`);
    this.position += 1;
  }
  fail(problem: string): SqlFilterSyntaxError {
    return new SqlFilterSyntaxError(this.expression, problem);
  }
}

function parseOr(c: Cursor): Predicate {
  let left = parseAnd(c);
  while (c.skipWord('OR')) left = { op: 'or', left, right: parseAnd(c) };
  return left;
}

function parseAnd(c: Cursor): Predicate {
  let left = parseNot(c);
  while (c.skipWord('AND')) left = { op: 'and', left, right: parseNot(c) };
  return left;
}

function parseNot(c: Cursor): Predicate {
  if (c.skipWord('NOT')) return { op: 'not', operand: parseNot(c) };
  return parseCondition(c);
}

function parseCondition(c: Cursor): Predicate {
  if (c.skipWord('EXISTS')) return parseExists(c);
  const parenthesised = c.isSymbol('(') ? parseParenthesisedPredicate(c) : undefined;
  if (parenthesised) return parenthesised;
  const left = parseAdditive(c);
  const t = c.peek();
  if (t?.kind === 'symbol' && ['=', '<>', '!=', '<', '<=', '>', '>='].includes(t.text)) {
    c.position += 1;
    const operator = (t.text === '!=' ? '<>' : t.text) as ComparisonOperator;
    return { op: 'compare', operator, left, right: parseAdditive(c) };
  }
  if (c.skipWord('IS')) return parseIsNull(c, left);
  const negated = c.skipWord('NOT');
  if (c.skipWord('IN')) return parseIn(c, left, negated);
  if (c.skipWord('LIKE')) return parseLike(c, left, negated);
  if (negated) throw c.fail('NOT must be followed by IN or LIKE here');
  return { op: 'value', operand: left };
}

function parseExists(c: Cursor): Predicate {
  c.expectSymbol('(');
  const property = parseOperand(c);
  if (property.op !== 'property') throw c.fail('EXISTS takes a property name');
  c.expectSymbol(')');
  return { op: 'exists', property };
}

/**
 * A parenthesised predicate, told from a parenthesised expression (`(a + 1) > 2`) by what follows
 * it: undefined, with the cursor back at the parenthesis, when it is not one.
 */
function parseParenthesisedPredicate(c: Cursor): Predicate | undefined {
  const saved = c.position;
  c.position += 1;
  try {
    const inner = parseOr(c);
    c.expectSymbol(')');
    if (c.atEnd() || c.isWord('AND') || c.isWord('OR') || c.isSymbol(')')) return inner;
  } catch (error) {
    if (!(error instanceof SqlFilterSyntaxError)) throw error;
  }
  c.position = saved;
  return undefined;
}

function parseIsNull(c: Cursor, operand: Expression): Predicate {
  const negated = c.skipWord('NOT');
  if (!c.skipWord('NULL')) throw c.fail('IS must be followed by [NOT] NULL');
  return { op: 'is-null', negated, operand };
}

function parseIn(c: Cursor, operand: Expression, negated: boolean): Predicate {
  c.expectSymbol('(');
  const list = [parseAdditive(c)];
  while (c.isSymbol(',')) {
    c.position += 1;
    list.push(parseAdditive(c));
  }
  c.expectSymbol(')');
  return { op: 'in', negated, operand, list };
}

function parseLike(c: Cursor, operand: Expression, negated: boolean): Predicate {
  const pattern = c.take();
  if (pattern.kind !== 'string') throw c.fail('LIKE takes a string pattern');
  let escape: string | undefined;
  if (c.skipWord('ESCAPE')) {
    const e = c.take();
    if (e.kind !== 'string' || e.text.length !== 1) throw c.fail('ESCAPE takes one character');
    escape = e.text;
  }
  return { op: 'like', negated, operand, pattern: pattern.text, escape };
}

function parseAdditive(c: Cursor): Expression {
  let left = parseMultiplicative(c);
  while (c.isSymbol('+') || c.isSymbol('-')) {
    const operator = c.take().text as ArithmeticOperator;
    left = { op: 'arith', operator, left, right: parseMultiplicative(c) };
  }
  return left;
}

function parseMultiplicative(c: Cursor): Expression {
  let left = parseUnary(c);
  while (c.isSymbol('*') || c.isSymbol('/') || c.isSymbol('%')) {
    const operator = c.take().text as ArithmeticOperator;
    left = { op: 'arith', operator, left, right: parseUnary(c) };
  }
  return left;
}

function parseUnary(c: Cursor): Expression {
  if (c.isSymbol('-')) {
    c.position += 1;
    return { op: 'negate', operand: parseUnary(c) };
  }
  if (c.isSymbol('+')) c.position += 1;
  return parseOperand(c);
}

function parseOperand(c: Cursor): Expression {
  const t = c.take();
  if (t.kind === 'string') return { op: 'literal', value: t.text };
  if (t.kind === 'number') return { op: 'literal', value: Number(t.text) };
  if (t.kind === 'symbol' && t.text === '(') {
    const inner = parseAdditive(c);
    c.expectSymbol(')');
    return inner;
  }
  if (t.kind === 'quoted') return { op: 'property', scope: 'user', name: t.text };
  if (t.kind === 'word') return parseWordOperand(c, t);
  throw c.fail(`unexpected "${t.text}" at ${t.at}`);
}

/** TRUE, FALSE, NULL, a `sys.` or `user.` property, or a bare name (a user property). */
function parseWordOperand(c: Cursor, t: Token): Expression {
  const upper = t.text.toUpperCase();
  if (upper === 'TRUE' || upper === 'FALSE') return { op: 'literal', value: upper === 'TRUE' };
  if (upper === 'NULL') return { op: 'literal', value: null };
  const scope = t.text.toLowerCase();
  if ((scope === 'sys' || scope === 'user') && c.isSymbol('.')) {
    c.position += 1;
    const name = c.take();
    if (name.kind !== 'word' && name.kind !== 'quoted') throw c.fail(`a property name must follow ${t.text}.`);
    return { op: 'property', scope, name: name.text };
  }
  return { op: 'property', scope: 'user', name: t.text };
}
