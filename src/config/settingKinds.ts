import { z } from 'zod';
import type { SettingDocs } from './settingDeclaration.js';

/*
 * The kinds of setting, each a declaration with its rule. Called once, when the declarations load;
 * the schema functions they return run each time the settings are read.
 */

/** Read by the host or the telemetry set-up, not by the app's `loadSettings`. */
export function readElsewhere<const D extends SettingDocs>(docs: D): D {
  return docs;
}

const optionalString = () => z.string().trim().min(1).optional();

/** Text that may be absent (an empty value is absent). */
export function optionalText<const D extends SettingDocs>(docs: D) {
  return { ...docs, schema: optionalString };
}

/** Text the app cannot start without; `message` says what it is for. */
export function requiredText<const D extends SettingDocs>(message: string, docs: D) {
  return { defaultText: '— (required)', ...docs, schema: () => z.string().trim().min(1, message) };
}

/** A name (of a queue, a container, a topic) or a schedule, with a default. */
export function textWithDefault<const V extends string, const D extends SettingDocs>(value: V, docs: D) {
  return { ...docs, default: value, schema: () => z.string().trim().min(1).default(value) };
}

/** A whole number of at least `min`, and at most `atMost[0]` (with that message) when given. */
export function wholeNumber<const D extends SettingDocs>(
  rule: { readonly min: number; readonly default: number; readonly atMost?: readonly [number, string] },
  docs: D,
) {
  const schema = () => {
    const read = z.coerce.number().int().min(rule.min).default(rule.default);
    const { atMost } = rule;
    return atMost === undefined ? read : read.refine((n) => n <= atMost[0], atMost[1]);
  };
  return { ...docs, default: rule.default, schema };
}

/** One of a few words, with a default. */
export function oneOf<const V extends readonly [string, ...string[]], const D extends SettingDocs>(values: V, value: V[number], message: string, docs: D) {
  return { ...docs, default: value, schema: () => z.enum(values, { error: message }).default(value) };
}

/** A rule of its own, with no default. */
export function withRule<S extends z.ZodType, const D extends SettingDocs>(schema: () => S, docs: D) {
  return { ...docs, schema };
}

/** The part of a Key Vault reference the platform leaves in place when it could not resolve it. */
const unresolvedReference = '@Microsoft.KeyVault(';
export const unresolvedReferenceProblem =
  'is still a Key Vault reference: the platform could not resolve it (check the app identity has Key Vault Secrets User on the vault, and keyVaultReferenceIdentity)';

/** A secret from Key Vault: absent, or resolved. */
export const resolvedSecret = () => optionalString().refine((key) => key === undefined || !key.startsWith(unresolvedReference), unresolvedReferenceProblem);

/** A secret that signs retry state: resolved (not a Key Vault reference still) and long enough to be one. */
export const signingKey = () =>
  resolvedSecret().refine((key) => key === undefined || key.length >= 32, 'must be at least 32 characters (a random secret: `openssl rand -base64 32`)');

/**
 * Cosmos DB refuses an item whose `ttl` is above 2,147,483,647 seconds (a 32-bit number, about 68
 * years): a lifetime setting above it would make every write that carries it fail, so it is refused
 * at start-up instead. `copies`: how many times the longest document kept for it multiplies the
 * setting (payment claims live twice as long as markers).
 */
export const cosmosMaxTtlSeconds = 2_147_483_647;
export const documentLifetimeAtMost = (copies = 1): readonly [number, string] => {
  const most = Math.floor(cosmosMaxTtlSeconds / copies);
  return [
    most,
    `must be at most ${most} (Cosmos DB's largest ttl is ${cosmosMaxTtlSeconds} s${copies > 1 ? `, and some documents live ${copies} times this` : ''})`,
  ];
};
