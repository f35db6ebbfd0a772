import type { z } from 'zod';
import { ConfigurationError } from '../configurationError.js';

export type Environment = Readonly<Record<string, string | undefined>>;

/** An empty app setting means "not set" (the portal and azd write empty strings). */
export function withoutBlanks(env: Environment): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1].trim() !== ''));
}

/** The schema's verdict on the environment, or a `ConfigurationError` naming each setting it refused. */
export function parseOrThrow<S extends z.ZodType>(schema: S, env: Environment): z.infer<S> {
  const parsed = schema.safeParse(withoutBlanks(env));
  // Stryker disable next-line StringLiteral: every issue of an object schema has a path; the fallback is for a zod change, not reachable from an env object
  if (!parsed.success) throw new ConfigurationError(parsed.error.issues.map((i) => ({ setting: String(i.path[0] ?? '(settings)'), problem: i.message })));
  return parsed.data;
}

export function deepFreeze<T extends object>(value: T): T {
  // Stryker disable next-line ConditionalExpression: settings never hold null (an absent value is undefined), so the null guard cannot change the result
  for (const child of Object.values(value)) if (typeof child === 'object' && child !== null) deepFreeze(child);
  return Object.freeze(value);
}
