import type { AmqpMessage } from './entityTypes.js';
import type { Expression, Predicate, PropertyReference, Value } from './sqlSyntax.js';

/** The system properties a filter or an action names (`sys.Label`), by lower-case name, as AMQP fields. */
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

/** Three-valued, as SQL: a comparison with NULL (a missing property) is unknown, and unknown never matches. */
export function evaluatePredicate(p: Predicate, message: AmqpMessage): boolean | null {
  switch (p.op) {
    case 'and':
      return and(evaluatePredicate(p.left, message), evaluatePredicate(p.right, message));
    case 'or':
      return or(evaluatePredicate(p.left, message), evaluatePredicate(p.right, message));
    case 'not': {
      const v = evaluatePredicate(p.operand, message);
      return v === null ? null : !v;
    }
    case 'compare':
      return compare(p.operator, value(p.left, message), value(p.right, message));
    case 'is-null':
      return (value(p.operand, message) === null) !== p.negated;
    case 'in':
      return isIn(value(p.operand, message), p.list, message, p.negated);
    case 'like':
      return isLike(value(p.operand, message), p.pattern, p.escape, p.negated);
    case 'exists':
      return propertyValue(p.property, message) !== undefined;
    case 'value': {
      const v = value(p.operand, message);
      return v === null ? null : v === true;
    }
  }
}

function and(l: boolean | null, r: boolean | null): boolean | null {
  if (l === false || r === false) return false;
  return l === null || r === null ? null : true;
}

function or(l: boolean | null, r: boolean | null): boolean | null {
  if (l === true || r === true) return true;
  return l === null || r === null ? null : false;
}

function isIn(v: Value, list: readonly Expression[], message: AmqpMessage, negated: boolean): boolean | null {
  if (v === null) return null;
  const found = list.some((e) => compare('=', v, value(e, message)) === true);
  return found !== negated;
}

function isLike(v: Value, pattern: string, escape: string | undefined, negated: boolean): boolean | null {
  if (v === null) return null;
  if (typeof v !== 'string') return false;
  return likePattern(pattern, escape).test(v) !== negated;
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

/** An expression's value on a message: NULL for a missing property, and for arithmetic on what is not a number. */
export function value(e: Expression, message: AmqpMessage): Value {
  switch (e.op) {
    case 'literal':
      return e.value;
    case 'property':
      return propertyAsValue(propertyValue(e, message));
    case 'negate': {
      const v = value(e.operand, message);
      return typeof v === 'number' ? -v : null;
    }
    case 'arith':
      return arithmetic(e.operator, value(e.left, message), value(e.right, message));
  }
}

function propertyAsValue(v: unknown): Value {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.getTime();
  return String(v);
}

function arithmetic(operator: '+' | '-' | '*' | '/' | '%', l: Value, r: Value): Value {
  if (operator === '+' && typeof l === 'string' && typeof r === 'string') return l + r;
  if (typeof l !== 'number' || typeof r !== 'number') return null;
  switch (operator) {
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

function propertyValue(e: PropertyReference, message: AmqpMessage): unknown {
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

/** LIKE as a regular expression: % any run, _ one character, the ESCAPE character taking the next literally. */
function likePattern(pattern: string, escape?: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i] ?? '';
    if (escape !== undefined && ch === escape && i + 1 < pattern.length) {
      source += escapeRegExp(pattern[i + 1] ?? '');
      i += 1;
    } else if (ch === '%') {
      source += '[\\s\\S]*';
    } else if (ch === '_') {
      source += '[\\s\\S]';
    } else {
      source += escapeRegExp(ch);
    }
  }
  return new RegExp(`^${source}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
