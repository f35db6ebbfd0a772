/** One field whose value differs between the message and what the store holds. */
export interface FieldDifference {
  readonly path: string;
  readonly message: unknown;
  readonly stored: unknown;
}

/**
 * The fields in which two JSON payloads differ, by path (`lines[0].quantity`), in the message's
 * order, then those only the stored one has. `undefined` stands for a field one side lacks.
 */
export function payloadDifferences(message: unknown, stored: unknown): FieldDifference[] {
  const a = flatten(message);
  const b = flatten(stored);
  const paths = [...a.keys(), ...[...b.keys()].filter((k) => !a.has(k))];
  return paths.filter((p) => !sameLeaf(a.get(p), b.get(p))).map((path) => ({ path, message: a.get(path), stored: b.get(path) }));
}

/** Fields past this depth, or past this count, are compared whole: the walk is bounded whatever the payload holds. */
const maxDepth = 64;
const maxFields = 10_000;

/** Path -> leaf value, in document order, walked with an explicit stack (no recursion over a payload). */
function flatten(value: unknown): Map<string, unknown> {
  const into = new Map<string, unknown>();
  const pending: [string, unknown, number][] = [['', value, 0]];
  while (pending.length > 0) {
    const [path, next, depth] = pending.pop() as [string, unknown, number];
    if (into.size >= maxFields) {
      into.set('…', `(the fields past the first ${maxFields} are not compared)`);
      break;
    }
    if (typeof next === 'object' && next !== null && depth >= maxDepth) {
      into.set(path, `(not compared: deeper than ${maxDepth} levels)`);
      continue;
    }
    const children = typeof next === 'object' && next !== null ? childrenOf(path, next) : undefined;
    if (children === undefined || children.length === 0) {
      into.set(path, next);
      continue;
    }
    for (let i = children.length - 1; i >= 0; i--) {
      const [childPath, child] = children[i] as [string, unknown];
      pending.push([childPath, child, depth + 1]);
    }
  }
  return into;
}

function childrenOf(path: string, value: object): [string, unknown][] {
  if (Array.isArray(value)) return value.map((item: unknown, i) => [`${path}[${i}]`, item]);
  return Object.entries(value).map(([k, v]) => [path ? `${path}.${k}` : k, v]);
}

/** Leaves are primitives, empty arrays and empty objects: none needs walking to compare. */
function sameLeaf(x: unknown, y: unknown): boolean {
  if (typeof x === 'object' && x !== null && typeof y === 'object' && y !== null) return Array.isArray(x) === Array.isArray(y);
  return Object.is(x, y);
}
