/**
 * Why a message can never succeed, whatever the number of deliveries: the codes the core decides
 * itself. Each is one an operator acts on differently (see the README's runbook), so the set is
 * closed. A domain's own codes (a currency that does not match, a carrier's refusal) are declared
 * beside that domain with `failureCodes`.
 */
export const permanentFailureCodes = [
  'InvalidJson',
  'SchemaViolation',
  'NoDedupKey',
  'InvalidIdempotencyKey',
  'InvalidCloudEvent',
  'BodyTooDeep',
  'InvalidBody',
  'AmbiguousProperty',
  'UnknownMessageType',
  'MessageTooLarge',
  'RetryBudgetExhausted',
  'PayloadConflict',
] as const;

export type PermanentFailureCode = (typeof permanentFailureCodes)[number];

declare const domainCode: unique symbol;

/**
 * A code a domain decides, declared with `failureCodes`. At run time it is the plain string (what
 * rejection records store and the operator tool reads); the brand only keeps a misspelt or undeclared
 * code from compiling.
 */
export type DomainFailureCode<Code extends string = string> = Code & { readonly [domainCode]: Code };

/** Every code a `PermanentMessageError` may carry: the core's and the ones domains declare. */
export type FailureCode = PermanentFailureCode | DomainFailureCode;

/** Identifiers, as the runbook and the operator tool's filters name them. */
const codeForm = /^[A-Z][A-Za-z]*$/;

/**
 * A domain's closed set of codes, as values: `failureCodes(['CurrencyMismatch']).CurrencyMismatch`.
 * A code the core decides, or one that is not an identifier, is refused: one code, one meaning.
 */
export function failureCodes<const Code extends string>(codes: readonly Code[]): { readonly [K in Code]: DomainFailureCode<K> } {
  const declared: Record<string, string> = {};
  for (const code of codes) {
    if (!codeForm.test(code)) throw new RangeError(`failure code ${JSON.stringify(code)} is not an identifier (letters, starting with a capital)`);
    if ((permanentFailureCodes as readonly string[]).includes(code))
      throw new RangeError(`failure code ${code} is the core's own; a domain declares only its own codes`);
    declared[code] = code;
  }
  return Object.freeze(declared) as { readonly [K in Code]: DomainFailureCode<K> };
}

/** A message that must end in the dead-letter queue with a reason; redelivering it cannot help. */
export class PermanentMessageError extends Error {
  override readonly name = 'PermanentMessageError';
  constructor(
    readonly code: FailureCode,
    readonly description: string,
    readonly dedupKey?: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${description}${dedupKey === undefined ? '' : ` (dedup key ${JSON.stringify(dedupKey)})`}`, options);
  }
}

/** The store could not answer now (throttling, timeout, network); a redelivery may succeed. */
export class TransientStoreError extends Error {
  override readonly name = 'TransientStoreError';
  constructor(
    message: string,
    readonly statusCode?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
