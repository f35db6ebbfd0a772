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
  return paths.filter((p) => JSON.stringify(a.get(p)) !== JSON.stringify(b.get(p))).map((path) => ({ path, message: a.get(path), stored: b.get(path) }));
}

function flatten(value: unknown, path = '', into = new Map<string, unknown>()): Map<string, unknown> {
  if (Array.isArray(value)) {
    if (value.length === 0) into.set(path, value);
    value.forEach((item, i) => flatten(item, `${path}[${i}]`, into));
  } else if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (entries.length === 0) into.set(path, value);
    for (const [k, v] of entries) flatten(v, path ? `${path}.${k}` : k, into);
  } else {
    into.set(path, value);
  }
  return into;
}
