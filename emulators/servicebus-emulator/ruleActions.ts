import type { AmqpMessage } from './entityTypes.js';
import { systemFields, userPropertyKey, value } from './sqlEvaluator.js';
import { parseSqlFilter } from './sqlParser.js';
import { SqlFilterSyntaxError } from './sqlSyntax.js';
import type { PropertyReference } from './sqlSyntax.js';
import type { ActionStatement, RuleAction } from './subscriptionRules.js';

/**
 * A rule's SQL action as Service Bus documents it: statements separated by `,` (a `;` after each is
 * optional), each `SET <property> = <expression>` or `REMOVE <property>`, a property being
 * `[sys.|user.]name` or a `[delimited name]`, user scope by default. Refused with SqlFilterSyntaxError,
 * as Service Bus refuses the rule when it is created.
 */
export function parseRuleAction(expression: string): RuleAction {
  const statements = splitStatements(expression).map((text) => parseStatement(expression, text));
  if (statements.length === 0) throw new SqlFilterSyntaxError(expression, 'an action has at least one SET or REMOVE statement');
  return { expression, statements };
}

/** The subscription's copy of a message after the action: the sender's message itself is never changed. */
export function applyRuleAction(action: RuleAction, message: AmqpMessage): AmqpMessage {
  let result: AmqpMessage = { ...message, application_properties: { ...((message.application_properties ?? {}) as Record<string, unknown>) } };
  for (const statement of action.statements) {
    // Every value is computed on the message as the statement before left it.
    const next = statement.op === 'set' ? value(statement.value, result) : undefined;
    result = write(result, statement.property, statement.op, next);
  }
  return result;
}

function write(message: AmqpMessage, property: PropertyReference, op: 'set' | 'remove', next: unknown): AmqpMessage {
  if (property.scope === 'sys') {
    const field = systemFields[property.name.toLowerCase()];
    if (field === undefined) return message;
    const copy = { ...message };
    if (op === 'remove' || next === null) delete copy[field];
    else copy[field] = typeof next === 'string' ? next : String(next);
    return copy;
  }
  const props = { ...((message.application_properties ?? {}) as Record<string, unknown>) };
  const key = userPropertyKey(props, property.name) ?? property.name;
  if (op === 'remove') delete props[key];
  else props[key] = next;
  return { ...message, application_properties: props };
}

function parseStatement(expression: string, text: string): ActionStatement {
  const fail = (problem: string) => new SqlFilterSyntaxError(expression, problem);
  const match = /^\s*(SET|REMOVE)\s+((?:(?:sys|user)\s*\.\s*)?(?:\[[^\]]+\]|[A-Za-z_$][A-Za-z0-9_$]*))\s*(?:=\s*([\s\S]*))?$/i.exec(text);
  if (!match) throw fail(`"${text.trim()}" is not SET <property> = <expression> or REMOVE <property>`);
  const [, verb = '', target = '', rest] = match;
  const property = propertyOf(target);
  if (verb.toUpperCase() === 'REMOVE') {
    if (rest !== undefined) throw fail(`REMOVE takes a property alone: "${text.trim()}"`);
    return { op: 'remove', property };
  }
  if (rest === undefined || rest.trim() === '') throw fail(`SET ${target} needs "= <expression>"`);
  const parsed = parseSqlFilter(rest);
  if (parsed.op !== 'value') throw fail(`SET ${target} takes a value, not a condition: "${rest.trim()}"`);
  return { op: 'set', property, value: parsed.operand };
}

function propertyOf(target: string): PropertyReference {
  const scoped = /^(sys|user)\s*\.\s*(.+)$/i.exec(target);
  const scope = (scoped?.[1]?.toLowerCase() ?? 'user') as 'sys' | 'user';
  const raw = scoped?.[2] ?? target;
  const name = raw.startsWith('[') ? raw.slice(1, -1) : raw;
  return { op: 'property', scope, name };
}

/** Top-level `,` and `;` end a statement; inside a 'string', a [name] or parentheses they do not. */
function splitStatements(expression: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < expression.length; i += 1) {
    const ch = expression[i] ?? '';
    if (ch === "'") {
      const end = closingQuote(expression, i);
      current += expression.slice(i, end + 1);
      i = end;
    } else if (ch === '[') {
      const end = expression.indexOf(']', i);
      const stop = end < 0 ? expression.length - 1 : end;
      current += expression.slice(i, stop + 1);
      i = stop;
    } else if ((ch === ',' || ch === ';') && depth === 0) {
      if (current.trim() !== '') parts.push(current);
      current = '';
    } else {
      if (ch === '(') depth += 1;
      if (ch === ')') depth -= 1;
      current += ch;
    }
  }
  if (current.trim() !== '') parts.push(current);
  return parts;
}

/** The index of the quote that closes the string opening at `start` ('' inside is a quote). */
function closingQuote(expression: string, start: number): number {
  for (let i = start + 1; i < expression.length; i += 1) {
    if (expression[i] === "'" && expression[i + 1] === "'") i += 1;
    else if (expression[i] === "'") return i;
  }
  return expression.length - 1;
}
