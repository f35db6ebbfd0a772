import type { CorrelationRuleFilter, ServiceBusMessage, SqlRuleFilter } from '@azure/service-bus';

/**
 * Decides, before a copy is sent to a topic, whether a subscription's rule takes it. Only the filter
 * forms a deployment of this project uses are understood (infra/servicebus-queues.json): correlation
 * filters, and SQL filters made of `=`, `<>`, `IS [NOT] NULL`, `AND`, `OR`, `NOT`, parentheses,
 * string/number/boolean literals, `sys.*` message properties and application properties. Anything
 * else is refused with `UnsupportedFilterError`: guessing would risk removing an original whose copy
 * the topic then drops.
 */
export class UnsupportedFilterError extends Error {
  constructor(
    readonly filter: string,
    why: string,
  ) {
    super(`cannot evaluate the filter ${JSON.stringify(filter)}: ${why}`);
    this.name = 'UnsupportedFilterError';
  }
}

type Value = string | number | boolean | null;
/** SQL's three-valued logic: null is "unknown" (a comparison with a missing property). */
type Truth = boolean | null;

const maxExpressionLength = 2048;
const maxNesting = 32;

/** The message's system properties as a SQL filter names them (`sys.Label` is the subject). */
const systemProperties: Readonly<Record<string, (m: ServiceBusMessage) => unknown>> = {
  label: (m) => m.subject,
  subject: (m) => m.subject,
  to: (m) => m.to,
  messageid: (m) => m.messageId,
  correlationid: (m) => m.correlationId,
  contenttype: (m) => m.contentType,
  sessionid: (m) => m.sessionId,
  replyto: (m) => m.replyTo,
  replytosessionid: (m) => m.replyToSessionId,
};

export function matchesFilter(filter: SqlRuleFilter | CorrelationRuleFilter, message: ServiceBusMessage): boolean {
  if ('sqlExpression' in filter) return matchesSql(filter, message);
  return matchesCorrelation(filter, message);
}

function matchesCorrelation(filter: CorrelationRuleFilter, message: ServiceBusMessage): boolean {
  const fields: [unknown, unknown][] = [
    [filter.correlationId, message.correlationId],
    [filter.messageId, message.messageId],
    [filter.to, message.to],
    [filter.replyTo, message.replyTo],
    [filter.subject, message.subject],
    [filter.sessionId, message.sessionId],
    [filter.replyToSessionId, message.replyToSessionId],
    [filter.contentType, message.contentType],
  ];
  const named = fields.filter(([wanted]) => wanted !== undefined && wanted !== null && wanted !== '');
  const properties = Object.entries(filter.applicationProperties ?? {});
  if (named.length === 0 && properties.length === 0) throw new UnsupportedFilterError(JSON.stringify(filter), 'a correlation filter that names no property');
  return (
    named.every(([wanted, actual]) => actual !== undefined && String(wanted) === String(actual)) &&
    properties.every(([name, wanted]) => sameValue(message.applicationProperties?.[name], wanted))
  );
}

function sameValue(actual: unknown, wanted: unknown): boolean {
  if (actual === undefined || actual === null) return false;
  if (actual instanceof Date || wanted instanceof Date) return new Date(actual as string).getTime() === new Date(wanted as string).getTime();
  return actual === wanted;
}

function matchesSql(filter: SqlRuleFilter, message: ServiceBusMessage): boolean {
  const text = filter.sqlExpression;
  if (filter.sqlParameters !== undefined && Object.keys(filter.sqlParameters).length > 0)
    throw new UnsupportedFilterError(text, 'parameters (@name) are not supported');
  if (text.length > maxExpressionLength) throw new UnsupportedFilterError(text.slice(0, 80), `longer than ${maxExpressionLength} characters`);
  const parser = new Parser(text, tokenize(text), message);
  const result = parser.expression(0);
  parser.end();
  return result === true;
}

type Token = { kind: 'word'; text: string } | { kind: 'string'; value: string } | { kind: 'number'; value: number } | { kind: 'symbol'; text: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s+|(?<string>'(?:[^']|'')*')|(?<number>\d+(?:\.\d+)?)|(?<word>[A-Za-z_][A-Za-z0-9_.]*)|(?<symbol><>|!=|=|\(|\))/y;
  let at = 0;
  while (at < text.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (!match) throw new UnsupportedFilterError(text, `unexpected ${JSON.stringify(text.slice(at, at + 10))} at ${at}`);
    at = pattern.lastIndex;
    const g = match.groups ?? {};
    if (g.string !== undefined) tokens.push({ kind: 'string', value: g.string.slice(1, -1).replaceAll("''", "'") });
    else if (g.number !== undefined) tokens.push({ kind: 'number', value: Number(g.number) });
    else if (g.word !== undefined) tokens.push({ kind: 'word', text: g.word });
    else if (g.symbol !== undefined) tokens.push({ kind: 'symbol', text: g.symbol });
  }
  return tokens;
}

/** Precedence climbing over OR < AND < NOT; nesting is bounded, so a hostile filter cannot overflow the stack. */
class Parser {
  private at = 0;
  constructor(
    private readonly text: string,
    private readonly tokens: readonly Token[],
    private readonly message: ServiceBusMessage,
  ) {}

  expression(depth: number): Truth {
    let left = this.conjunction(depth);
    while (this.keyword('OR')) {
      const right = this.conjunction(depth);
      left = left === true || right === true ? true : left === null || right === null ? null : false;
    }
    return left;
  }

  end(): void {
    if (this.at < this.tokens.length) this.refuse(`unexpected ${this.describe(this.tokens[this.at])}`);
  }

  private conjunction(depth: number): Truth {
    let left = this.negation(depth);
    while (this.keyword('AND')) {
      const right = this.negation(depth);
      left = left === false || right === false ? false : left === null || right === null ? null : true;
    }
    return left;
  }

  private negation(depth: number): Truth {
    let negations = 0;
    while (this.keyword('NOT')) negations++;
    const value = this.primary(depth);
    return value === null || negations % 2 === 0 ? value : !value;
  }

  private primary(depth: number): Truth {
    if (this.symbol('(')) {
      if (depth >= maxNesting) this.refuse(`nested deeper than ${maxNesting}`);
      const inner = this.expression(depth + 1);
      if (!this.symbol(')')) this.refuse('a parenthesis is not closed');
      return inner;
    }
    const left = this.operand();
    if (this.keyword('IS')) {
      const negated = this.keyword('NOT');
      if (!this.keyword('NULL')) this.refuse('IS must be followed by NULL or NOT NULL');
      return (left === null) !== negated;
    }
    const operator = this.tokens[this.at];
    if (operator?.kind === 'symbol' && ['=', '<>', '!='].includes(operator.text)) {
      this.at++;
      const right = this.operand();
      if (left === null || right === null) return null;
      return (left === right) === (operator.text === '=');
    }
    if (operator?.kind === 'word' || (operator?.kind === 'symbol' && !['(', ')'].includes(operator.text))) {
      const word = operator.kind === 'word' ? operator.text.toUpperCase() : operator.text;
      if (!['AND', 'OR'].includes(word)) this.refuse(`${operator.text} is not supported`);
    }
    if (typeof left === 'boolean') return left;
    return this.refuse(`expected a comparison after ${this.describe(this.tokens[this.at - 1])}`);
  }

  private operand(): Value {
    const token = this.tokens[this.at++];
    if (token === undefined) return this.refuse('the expression ends too early');
    if (token.kind === 'string' || token.kind === 'number') return token.value;
    if (token.kind !== 'word') return this.refuse(`unexpected ${this.describe(token)}`);
    const word = token.text.toUpperCase();
    if (word === 'TRUE' || word === 'FALSE') return word === 'TRUE';
    if (word === 'NULL') return null;
    if (['AND', 'OR', 'NOT', 'IS', 'LIKE', 'IN', 'EXISTS', 'ESCAPE'].includes(word)) return this.refuse(`${token.text} is not supported here`);
    return this.property(token.text);
  }

  private property(name: string): Value {
    const dot = name.indexOf('.');
    const scope = dot < 0 ? 'user' : name.slice(0, dot).toLowerCase();
    const rest = dot < 0 ? name : name.slice(dot + 1);
    if (scope === 'sys') {
      const read = systemProperties[rest.toLowerCase()];
      if (!read) return this.refuse(`the system property ${name} is not supported`);
      return valueOf(read(this.message), this.text);
    }
    if (scope !== 'user' || rest.includes('.')) return this.refuse(`the property ${name} is not supported`);
    return valueOf(this.message.applicationProperties?.[rest], this.text);
  }

  private keyword(word: string): boolean {
    const token = this.tokens[this.at];
    if (token?.kind === 'word' && token.text.toUpperCase() === word) {
      this.at++;
      return true;
    }
    return false;
  }

  private symbol(text: string): boolean {
    const token = this.tokens[this.at];
    if (token?.kind === 'symbol' && token.text === text) {
      this.at++;
      return true;
    }
    return false;
  }

  private describe(token: Token | undefined): string {
    if (token === undefined) return 'the end';
    return token.kind === 'word' || token.kind === 'symbol' ? JSON.stringify(token.text) : JSON.stringify(token.value);
  }

  private refuse(why: string): never {
    throw new UnsupportedFilterError(this.text, why);
  }
}

function valueOf(value: unknown, filter: string): Value {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  throw new UnsupportedFilterError(filter, `compares a property of type ${value instanceof Date ? 'date' : typeof value}`);
}
