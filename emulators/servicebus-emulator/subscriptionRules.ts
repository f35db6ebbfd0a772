import type { AmqpMessage } from './messageEntity.js';

/**
 * A subscription rule's filter as Service Bus has them: the `$Default` rule's TrueFilter, a
 * CorrelationFilter (every field given must equal the message's), or a SqlFilter (a SQL-92 subset
 * over system and user properties). A rule may carry a SQL action (`SET`/`REMOVE`, see ruleActions.ts).
 */
export type RuleFilter =
  | { readonly kind: 'true' }
  | { readonly kind: 'false' }
  | { readonly kind: 'correlation'; readonly fields: CorrelationFields }
  | { readonly kind: 'sql'; readonly expression: string; readonly predicate: Predicate };

export interface CorrelationFields {
  readonly correlationId?: string;
  readonly messageId?: string;
  readonly to?: string;
  readonly replyTo?: string;
  readonly subject?: string;
  readonly sessionId?: string;
  readonly replyToSessionId?: string;
  readonly contentType?: string;
  readonly applicationProperties?: Readonly<Record<string, string | number | boolean | Date>>;
}

export interface SubscriptionRule {
  readonly name: string;
  readonly filter: RuleFilter;
  /** Applied to the subscription's copy of a message this rule matched. */
  readonly action?: RuleAction;
}

/** A parsed SQL rule action, with its text as given. */
export interface RuleAction {
  readonly expression: string;
  readonly statements: readonly ActionStatement[];
}

export type ActionStatement =
  | { readonly op: 'set'; readonly property: Expression & { op: 'property' }; readonly value: Expression }
  | { readonly op: 'remove'; readonly property: Expression & { op: 'property' } };

/** What a subscription has when nobody gave it rules: `$Default`, matching every message. */
export const defaultRule: SubscriptionRule = { name: '$Default', filter: { kind: 'true' } };

/** A message reaches a subscription when any of its rules matches (none: it gets nothing). */
export function subscriptionAccepts(rules: readonly SubscriptionRule[], message: AmqpMessage): boolean {
  return rules.some((rule) => filterMatches(rule.filter, message));
}

export function filterMatches(filter: RuleFilter, message: AmqpMessage): boolean {
  switch (filter.kind) {
    case 'true':
      return true;
    case 'false':
      return false;
    case 'correlation':
      return correlationMatches(filter.fields, message);
    case 'sql':
      return evaluate(filter.predicate, message) === true;
  }
}

export function sqlFilter(expression: string): RuleFilter {
  return { kind: 'sql', expression, predicate: parseSqlFilter(expression) };
}

export const systemFields: Readonly<Record<string, keyof AmqpMessage>> = {
  messageid: 'message_id',
  correlationid: 'correlation_id',
  to: 'to',
  replyto: 'reply_to',
  label: 'subject',
  subject: 'subject',
  sessionid: 'group_id',
  replytosessionid: 'reply_to_group_id',
  contenttype: 'content_type',
};

function correlationMatches(fields: CorrelationFields, message: AmqpMessage): boolean {
  const { applicationProperties, ...system } = fields;
  for (const [name, want] of Object.entries(system)) {
    if (want === undefined) continue;
    const field = systemFields[name.toLowerCase()];
    if (field === undefined || String(message[field] ?? '') !== want || message[field] === undefined) return false;
  }
  const props = (message.application_properties ?? {}) as Record<string, unknown>;
  for (const [name, want] of Object.entries(applicationProperties ?? {})) if (!sameValue(props[name], want)) return false;
  return true;
}

function sameValue(have: unknown, want: string | number | boolean | Date): boolean {
  if (want instanceof Date) return have instanceof Date && have.getTime() === want.getTime();
  return have === want;
}

// --- SQL filter: tokens, a recursive-descent parser, three-valued evaluation -------------------

export type Value = string | number | boolean | null;
export type Expression =
  | { readonly op: 'literal'; readonly value: Value }
  | { readonly op: 'property'; readonly scope: 'sys' | 'user'; readonly name: string }
  | { readonly op: 'arith'; readonly operator: '+' | '-' | '*' | '/' | '%'; readonly left: Expression; readonly right: Expression }
  | { readonly op: 'negate'; readonly operand: Expression };
export type Predicate =
  | { readonly op: 'and' | 'or'; readonly left: Predicate; readonly right: Predicate }
  | { readonly op: 'not'; readonly operand: Predicate }
  | { readonly op: 'compare'; readonly operator: '=' | '<>' | '<' | '<=' | '>' | '>='; readonly left: Expression; readonly right: Expression }
  | { readonly op: 'is-null'; readonly negated: boolean; readonly operand: Expression }
  | { readonly op: 'in'; readonly negated: boolean; readonly operand: Expression; readonly list: readonly Expression[] }
  | { readonly op: 'like'; readonly negated: boolean; readonly operand: Expression; readonly pattern: string; readonly escape?: string }
  | { readonly op: 'exists'; readonly property: Expression & { op: 'property' } }
  | { readonly op: 'value'; readonly operand: Expression };

interface Token {
  readonly kind: 'word' | 'string' | 'number' | 'symbol' | 'quoted';
  readonly text: string;
  readonly at: number;
}

/** Thrown for a filter Service Bus would refuse when the rule is created (a 400 there). */
export class SqlFilterSyntaxError extends Error {
  constructor(expression: string, problem: string) {
    super(`SQL filter ${JSON.stringify(expression)}: ${problem}`);
    this.name = 'SqlFilterSyntaxError';
  }
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const fail = (problem: string) => new SqlFilterSyntaxError(expression, problem);
  for (let i = 0; i < expression.length; ) {
    const ch = expression[i] ?? '';
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === "'") {
      let text = '';
      for (i += 1; ; i += 1) {
        if (i >= expression.length) throw fail('a string is not closed');
        if (expression[i] === "'" && expression[i + 1] === "'") {
          text += "'";
          i += 1;
        } else if (expression[i] === "'") {
          break;
        } else {
          text += expression[i];
        }
      }
      tokens.push({ kind: 'string', text, at: i });
      i += 1;
    } else if (ch === '[') {
      const end = expression.indexOf(']', i);
      if (end < 0) throw fail('a [delimited] name is not closed');
      tokens.push({ kind: 'quoted', text: expression.slice(i + 1, end), at: i });
      i = end + 1;
    } else if (/[0-9]/.test(ch) || (ch === '.' && /[0-9]/.test(expression[i + 1] ?? ''))) {
      const match = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(expression.slice(i));
      tokens.push({ kind: 'number', text: match?.[0] ?? ch, at: i });
      i += match?.[0].length ?? 1;
    } else if (/[A-Za-z_$]/.test(ch)) {
      const match = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(expression.slice(i));
      tokens.push({ kind: 'word', text: match?.[0] ?? ch, at: i });
      i += match?.[0].length ?? 1;
    } else {
      const two = expression.slice(i, i + 2);
      const symbol = ['<>', '!=', '<=', '>='].includes(two) ? two : ch;
      if (!['=', '<>', '!=', '<', '<=', '>', '>=', '(', ')', ',', '.', '+', '-', '*', '/', '%'].includes(symbol)) throw fail(`unexpected ${JSON.stringify(ch)} at ${i}`);
      tokens.push({ kind: 'symbol', text: symbol, at: i });
      i += symbol.length;
    }
  }
  return tokens;
}

export function parseSqlFilter(expression: string): Predicate {
  const tokens = tokenize(expression);
  let position = 0;
  const fail = (problem: string) => new SqlFilterSyntaxError(expression, problem);
  const peek = () => tokens[position];
  const isWord = (word: string, t = peek()) => t?.kind === 'word' && t.text.toUpperCase() === word;
  const isSymbol = (symbol: string, t = peek()) => t?.kind === 'symbol' && t.text === symbol;
  const take = () => {
    const t = tokens[position];
    if (!t) throw fail('it ends too early');
    position += 1;
    return t;
  };
  const expectSymbol = (symbol: string) => {
    if (!isSymbol(symbol)) throw fail(`expected "${symbol}"${peek() ? ` at ${peek()?.at}` : ' at the end'}`);
    position += 1;
  };

  const predicate = (): Predicate => {
    let left = conjunction();
    while (isWord('OR')) {
      position += 1;
      left = { op: 'or', left, right: conjunction() };
    }
    return left;
  };
  const conjunction = (): Predicate => {
    let left = negation();
    while (isWord('AND')) {
      position += 1;
      left = { op: 'and', left, right: negation() };
    }
    return left;
  };
  const negation = (): Predicate => {
    if (isWord('NOT')) {
      position += 1;
      return { op: 'not', operand: negation() };
    }
    return comparison();
  };
  const comparison = (): Predicate => {
    if (isWord('EXISTS')) {
      position += 1;
      expectSymbol('(');
      const property = operand();
      if (property.op !== 'property') throw fail('EXISTS takes a property name');
      expectSymbol(')');
      return { op: 'exists', property };
    }
    // A parenthesised predicate, told from a parenthesised expression by what follows it.
    if (isSymbol('(')) {
      const saved = position;
      position += 1;
      try {
        const inner = predicate();
        expectSymbol(')');
        if (!peek() || isWord('AND') || isWord('OR') || isSymbol(')')) return inner;
      } catch (error) {
        if (!(error instanceof SqlFilterSyntaxError)) throw error;
      }
      position = saved;
    }
    const left = additive();
    const t = peek();
    if (t?.kind === 'symbol' && ['=', '<>', '!=', '<', '<=', '>', '>='].includes(t.text)) {
      position += 1;
      const operator = (t.text === '!=' ? '<>' : t.text) as '=' | '<>' | '<' | '<=' | '>' | '>=';
      return { op: 'compare', operator, left, right: additive() };
    }
    if (isWord('IS')) {
      position += 1;
      const negated = isWord('NOT') ? (position += 1) > 0 : false;
      if (!isWord('NULL')) throw fail('IS must be followed by [NOT] NULL');
      position += 1;
      return { op: 'is-null', negated, operand: left };
    }
    const negated = isWord('NOT') ? (position += 1) > 0 : false;
    if (isWord('IN')) {
      position += 1;
      expectSymbol('(');
      const list = [additive()];
      while (isSymbol(',')) {
        position += 1;
        list.push(additive());
      }
      expectSymbol(')');
      return { op: 'in', negated, operand: left, list };
    }
    if (isWord('LIKE')) {
      position += 1;
      const pattern = take();
      if (pattern.kind !== 'string') throw fail('LIKE takes a string pattern');
      let escape: string | undefined;
      if (isWord('ESCAPE')) {
        position += 1;
        const e = take();
        if (e.kind !== 'string' || e.text.length !== 1) throw fail('ESCAPE takes one character');
        escape = e.text;
      }
      return { op: 'like', negated, operand: left, pattern: pattern.text, escape };
    }
    if (negated) throw fail('NOT must be followed by IN or LIKE here');
    return { op: 'value', operand: left };
  };
  const additive = (): Expression => {
    let left = multiplicative();
    while (isSymbol('+') || isSymbol('-')) {
      const operator = take().text as '+' | '-';
      left = { op: 'arith', operator, left, right: multiplicative() };
    }
    return left;
  };
  const multiplicative = (): Expression => {
    let left = unary();
    while (isSymbol('*') || isSymbol('/') || isSymbol('%')) {
      const operator = take().text as '*' | '/' | '%';
      left = { op: 'arith', operator, left, right: unary() };
    }
    return left;
  };
  const unary = (): Expression => {
    if (isSymbol('-')) {
      position += 1;
      return { op: 'negate', operand: unary() };
    }
    if (isSymbol('+')) position += 1;
    return operand();
  };
  const operand = (): Expression => {
    const t = take();
    if (t.kind === 'string') return { op: 'literal', value: t.text };
    if (t.kind === 'number') return { op: 'literal', value: Number(t.text) };
    if (t.kind === 'symbol' && t.text === '(') {
      const inner = additive();
      expectSymbol(')');
      return inner;
    }
    if (t.kind === 'quoted') return { op: 'property', scope: 'user', name: t.text };
    if (t.kind === 'word') {
      const upper = t.text.toUpperCase();
      if (upper === 'TRUE' || upper === 'FALSE') return { op: 'literal', value: upper === 'TRUE' };
      if (upper === 'NULL') return { op: 'literal', value: null };
      if ((t.text.toLowerCase() === 'sys' || t.text.toLowerCase() === 'user') && isSymbol('.')) {
        position += 1;
        const name = take();
        if (name.kind !== 'word' && name.kind !== 'quoted') throw fail(`a property name must follow ${t.text}.`);
        return { op: 'property', scope: t.text.toLowerCase() as 'sys' | 'user', name: name.text };
      }
      return { op: 'property', scope: 'user', name: t.text };
    }
    throw fail(`unexpected "${t.text}" at ${t.at}`);
  };

  if (tokens.length === 0) throw fail('it is empty');
  const result = predicate();
  if (position < tokens.length) throw fail(`unexpected "${peek()?.text}" at ${peek()?.at}`);
  return result;
}

/** Three-valued, as SQL: a comparison with NULL (a missing property) is unknown, and unknown never matches. */
function evaluate(p: Predicate, message: AmqpMessage): boolean | null {
  switch (p.op) {
    case 'and': {
      const [l, r] = [evaluate(p.left, message), evaluate(p.right, message)];
      if (l === false || r === false) return false;
      return l === null || r === null ? null : true;
    }
    case 'or': {
      const [l, r] = [evaluate(p.left, message), evaluate(p.right, message)];
      if (l === true || r === true) return true;
      return l === null || r === null ? null : false;
    }
    case 'not': {
      const v = evaluate(p.operand, message);
      return v === null ? null : !v;
    }
    case 'compare':
      return compare(p.operator, value(p.left, message), value(p.right, message));
    case 'is-null':
      return (value(p.operand, message) === null) !== p.negated;
    case 'in': {
      const v = value(p.operand, message);
      if (v === null) return null;
      const found = p.list.some((e) => compare('=', v, value(e, message)) === true);
      return found !== p.negated;
    }
    case 'like': {
      const v = value(p.operand, message);
      if (v === null) return null;
      if (typeof v !== 'string') return false;
      return likePattern(p.pattern, p.escape).test(v) !== p.negated;
    }
    case 'exists':
      return propertyValue(p.property, message) !== undefined;
    case 'value': {
      const v = value(p.operand, message);
      return v === null ? null : v === true;
    }
  }
}

function compare(operator: string, l: Value, r: Value): boolean | null {
  if (l === null || r === null) return null;
  // Numbers compare with numbers, strings with strings; mixed types never match.
  if (typeof l !== typeof r) return false;
  switch (operator) {
    case '=':
      return l === r;
    case '<>':
      return l !== r;
    case '<':
      return l < r;
    case '<=':
      return l <= r;
    case '>':
      return l > r;
    default:
      return l >= r;
  }
}

export function value(e: Expression, message: AmqpMessage): Value {
  switch (e.op) {
    case 'literal':
      return e.value;
    case 'property': {
      const v = propertyValue(e, message);
      if (v === undefined || v === null) return null;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
      if (v instanceof Date) return v.getTime();
      return String(v);
    }
    case 'negate': {
      const v = value(e.operand, message);
      return typeof v === 'number' ? -v : null;
    }
    case 'arith': {
      const [l, r] = [value(e.left, message), value(e.right, message)];
      if (e.operator === '+' && typeof l === 'string' && typeof r === 'string') return l + r;
      if (typeof l !== 'number' || typeof r !== 'number') return null;
      switch (e.operator) {
        case '+':
          return l + r;
        case '-':
          return l - r;
        case '*':
          return l * r;
        case '/':
          return r === 0 ? null : l / r;
        default:
          return r === 0 ? null : l % r;
      }
    }
  }
}

function propertyValue(e: Expression & { op: 'property' }, message: AmqpMessage): unknown {
  if (e.scope === 'sys') {
    const field = systemFields[e.name.toLowerCase()];
    return field === undefined ? undefined : message[field];
  }
  const props = (message.application_properties ?? {}) as Record<string, unknown>;
  const key = userPropertyKey(props, e.name);
  return key === undefined ? undefined : props[key];
}

/** Service Bus matches user property names whatever their case (`Color` finds `color`); an exact match first. */
export function userPropertyKey(props: Readonly<Record<string, unknown>>, name: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(props, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(props).find((k) => k.toLowerCase() === lower);
}

function likePattern(pattern: string, escape?: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i] ?? '';
    if (escape !== undefined && ch === escape && i + 1 < pattern.length) {
      source += (pattern[i + 1] ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i += 1;
    } else if (ch === '%') {
      source += '[\\s\\S]*';
    } else if (ch === '_') {
      source += '[\\s\\S]';
    } else {
      source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}
