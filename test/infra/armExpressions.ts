import { createHash } from 'node:crypto';

/** The tenant of the test subscription, as subscription().tenantId gives it. */
export const testTenantId = '00000000-0000-0000-0000-0000000000aa';

/**
 * A value only Azure knows at deployment time (`reference(...)`, a module output). Kept symbolic:
 * the tests assert what the template decides, not what Azure will return.
 */
export class RuntimeValue {
  constructor(readonly path: string) {}
  get(property: string): RuntimeValue {
    return new RuntimeValue(`${this.path}.${property}`);
  }
  toString(): string {
    return `{runtime:${this.path}}`;
  }
}

export interface Scope {
  readonly parameters: Record<string, unknown>;
  readonly variable: (name: string) => unknown;
  readonly functions: Record<string, { parameters: { name: string }[]; output: { value: unknown } }>;
  readonly copyIndex: Record<string, number>;
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  /** Resolves `reference(id)` where the template itself can (a sibling module's outputs). */
  readonly reference?: (resourceId: string) => unknown;
}

type Node =
  | { kind: 'literal'; value: unknown }
  | { kind: 'call'; name: string; args: Node[] }
  | { kind: 'member'; target: Node; property: string }
  | { kind: 'index'; target: Node; index: Node };

/** Evaluates a template value: `[expr]` strings are ARM expressions, `[[` escapes a literal `[`. */
export function isRuntimeText(value: unknown): boolean {
  return value instanceof RuntimeValue || (typeof value === 'string' && value.includes('{runtime:'));
}

export function evaluateValue(value: unknown, scope: Scope): unknown {
  if (typeof value === 'string') {
    if (value.startsWith('[[')) return value.slice(1);
    if (value.startsWith('[') && value.endsWith(']')) return evaluateNode(parseExpression(value.slice(1, -1)), scope);
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => evaluateValue(v, scope));
  if (value && typeof value === 'object') {
    const { copy, ...rest } = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(rest)) out[k] = evaluateValue(v, scope);
    if (Array.isArray(copy)) for (const loop of copy as { name: string; count: unknown; input: unknown }[]) out[loop.name] = expandPropertyCopy(loop, scope);
    return out;
  }
  return value;
}

function expandPropertyCopy(loop: { name: string; count: unknown; input: unknown }, scope: Scope): unknown[] {
  const count = Number(evaluateValue(loop.count, scope));
  return Array.from({ length: count }, (_, i) => evaluateValue(loop.input, { ...scope, copyIndex: { ...scope.copyIndex, [loop.name]: i } }));
}

function parseExpression(text: string): Node {
  let pos = 0;
  const skip = () => {
    while (text[pos] === ' ') pos += 1;
  };
  const expect = (ch: string) => {
    skip();
    if (text[pos] !== ch) throw new Error(`expected '${ch}' at ${pos} in ${text}`);
    pos += 1;
  };
  const primary = (): Node => {
    skip();
    if (text[pos] === "'") {
      let s = '';
      pos += 1;
      for (;;) {
        if (text[pos] === "'" && text[pos + 1] === "'") {
          s += "'";
          pos += 2;
        } else if (text[pos] === "'") {
          pos += 1;
          return { kind: 'literal', value: s };
        } else {
          s += text[pos];
          pos += 1;
        }
      }
    }
    const number = /^-?\d+/.exec(text.slice(pos));
    if (number) {
      pos += number[0].length;
      return { kind: 'literal', value: Number(number[0]) };
    }
    const name = /^[A-Za-z_$][\w.$#]*/.exec(text.slice(pos));
    if (!name) throw new Error(`unexpected '${text[pos]}' at ${pos} in ${text}`);
    pos += name[0].length;
    expect('(');
    const args: Node[] = [];
    skip();
    if (text[pos] !== ')') {
      for (;;) {
        args.push(postfix());
        skip();
        if (text[pos] === ',') {
          pos += 1;
          continue;
        }
        break;
      }
    }
    expect(')');
    return { kind: 'call', name: name[0], args };
  };
  const postfix = (): Node => {
    let node = primary();
    for (;;) {
      skip();
      if (text[pos] === '.') {
        pos += 1;
        const property = /^[\w$#-]+/.exec(text.slice(pos))?.[0] ?? '';
        pos += property.length;
        node = { kind: 'member', target: node, property };
      } else if (text[pos] === '[') {
        pos += 1;
        const index = postfix();
        expect(']');
        node = { kind: 'index', target: node, index };
      } else {
        return node;
      }
    }
  };
  const node = postfix();
  skip();
  if (pos !== text.length) throw new Error(`unparsed '${text.slice(pos)}' in ${text}`);
  return node;
}

function evaluateNode(node: Node, scope: Scope): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'member':
      return access(evaluateNode(node.target, scope), node.property);
    case 'index':
      return access(evaluateNode(node.target, scope), evaluateNode(node.index, scope));
    case 'call':
      return call(node.name, node.args, scope);
  }
}

function access(target: unknown, key: unknown): unknown {
  if (target instanceof RuntimeValue) return target.get(String(key));
  if (target === null || target === undefined) throw new Error(`cannot read ${String(key)} of ${String(target)}`);
  const value = (target as Record<string, unknown>)[String(key)];
  if (value === undefined) throw new Error(`no property ${String(key)}`);
  return value;
}

const pathOf = (type: string, names: unknown[]) => {
  const [provider, ...types] = type.split('/');
  return `providers/${provider}/${types.map((t, i) => `${t}/${String(names[i])}`).join('/')}`;
};

function call(name: string, argNodes: Node[], scope: Scope): unknown {
  if (name === 'if') {
    return evaluateNode(argNodes[Number(truthy(evaluateNode(argNodes[0]!, scope))) ? 1 : 2]!, scope);
  }
  const args = argNodes.map((a) => evaluateNode(a, scope));
  const user = name.startsWith('__bicep.') ? scope.functions[name.slice('__bicep.'.length)] : undefined;
  if (user) {
    const parameters = Object.fromEntries(user.parameters.map((p, i) => [p.name, args[i]]));
    return evaluateValue(user.output.value, { ...scope, parameters });
  }
  const [a, b, c] = args;
  switch (name.toLowerCase()) {
    case 'parameters':
      if (!(String(a) in scope.parameters)) throw new Error(`no parameter ${String(a)}`);
      return scope.parameters[String(a)];
    case 'variables':
      return scope.variable(String(a));
    case 'copyindex':
      return (typeof a === 'string' ? scope.copyIndex[a] : scope.copyIndex['']) ?? 0;
    case 'format':
      return String(a).replace(/\{(\d+)\}/g, (_, i: string) => text(args[Number(i) + 1]));
    case 'concat':
      return Array.isArray(a) ? args.flat() : args.map(text).join('');
    case 'string':
      return typeof a === 'string' || a instanceof RuntimeValue ? text(a) : JSON.stringify(a);
    case 'tolower':
      return text(a).toLowerCase();
    case 'length':
      return Array.isArray(a) || typeof a === 'string' ? a.length : Object.keys(a as object).length;
    case 'empty':
      return (
        a === null ||
        a === '' ||
        (Array.isArray(a) && a.length === 0) ||
        (typeof a === 'object' && a !== null && !(a instanceof RuntimeValue) && Object.keys(a).length === 0)
      );
    case 'not':
      return !truthy(a);
    case 'and':
      return args.every(truthy);
    case 'or':
      return args.some(truthy);
    case 'equals':
      return JSON.stringify(a) === JSON.stringify(b);
    case 'greater':
      return Number(a) > Number(b);
    case 'div':
      return Math.trunc(Number(a) / Number(b));
    case 'mod':
      return Number(a) % Number(b);
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
    case 'createarray':
      return args;
    case 'createobject':
      return Object.fromEntries(Array.from({ length: args.length / 2 }, (_, i) => [String(args[2 * i]), args[2 * i + 1]]));
    case 'trygetproperty':
    case 'tryget':
      return a !== null && typeof a === 'object' && !(a instanceof RuntimeValue) ? ((a as Record<string, unknown>)[String(b)] ?? null) : null;
    case 'coalesce':
      return args.find((x) => x !== null && x !== undefined) ?? null;
    case 'contains':
      return Array.isArray(a)
        ? a.some((x) => JSON.stringify(x) === JSON.stringify(b))
        : typeof a === 'string'
          ? a.includes(String(b))
          : Object.prototype.hasOwnProperty.call(a, String(b));
    case 'union':
      return Object.assign({}, ...(args as object[]));
    case 'items':
      return Object.keys(a as object)
        .sort()
        .map((key) => ({ key, value: (a as Record<string, unknown>)[key] }));
    case 'subscription':
      return { id: `/subscriptions/${scope.subscriptionId}`, subscriptionId: scope.subscriptionId, tenantId: testTenantId };
    case 'environment':
      return { name: 'AzureCloud', suffixes: { storage: 'core.windows.net' }, authentication: { loginEndpoint: 'https://login.microsoftonline.com/' } };
    case 'resourcegroup':
      return { name: scope.resourceGroup, id: `/subscriptions/${scope.subscriptionId}/resourceGroups/${scope.resourceGroup}` };
    case 'uniquestring':
      return createHash('sha256').update(args.map(text).join('|')).digest('hex').slice(0, 13);
    case 'guid':
      return uuidFrom(args.map(text).join('|'));
    case 'resourceid': {
      const typeAt = args.findIndex((x) => typeof x === 'string' && x.includes('/'));
      const group = typeAt >= 1 ? text(args[typeAt - 1]) : scope.resourceGroup;
      return `/subscriptions/${scope.subscriptionId}/resourceGroups/${group}/${pathOf(String(args[typeAt]), args.slice(typeAt + 1))}`;
    }
    case 'subscriptionresourceid':
      return `/subscriptions/${scope.subscriptionId}/${pathOf(String(a), args.slice(1))}`;
    case 'extensionresourceid':
      return `${text(a)}/${pathOf(String(b), args.slice(2))}`;
    case 'reference':
      return scope.reference?.(text(a)) ?? new RuntimeValue(`reference(${text(a)})`);
    default:
      void c;
      throw new Error(`the test evaluator does not implement ${name}()`);
  }
}

function truthy(value: unknown): boolean {
  if (value instanceof RuntimeValue) throw new Error(`a condition depends on a runtime value: ${value.path}`);
  return Boolean(value);
}

function text(value: unknown): string {
  return value instanceof RuntimeValue ? value.toString() : typeof value === 'string' ? value : JSON.stringify(value);
}

function uuidFrom(input: string): string {
  const h = createHash('sha1').update(input).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
