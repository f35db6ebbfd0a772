/**
 * Why a message can never succeed, whatever the number of deliveries. Each code is one an operator
 * acts on differently (see the README's runbook), so the set is closed.
 */
export type PermanentFailureCode =
  | 'InvalidJson'
  | 'SchemaViolation'
  | 'NoDedupKey'
  | 'InvalidIdempotencyKey'
  | 'InvalidCloudEvent'
  | 'BodyTooDeep'
  | 'InvalidBody'
  | 'AmbiguousProperty'
  | 'UnknownMessageType'
  | 'MessageTooLarge'
  | 'CurrencyMismatch'
  | 'VersionJump'
  | 'AmountOutOfRange'
  | 'RetryBudgetExhausted'
  | 'PayloadConflict'
  | 'CarrierRefused'
  | 'ShipmentEscalated';

/** A message that must end in the dead-letter queue with a reason; redelivering it cannot help. */
export class PermanentMessageError extends Error {
  override readonly name = 'PermanentMessageError';
  constructor(
    readonly code: PermanentFailureCode,
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

export interface SettingProblem {
  readonly setting: string;
  readonly problem: string;
}

/** Settings are missing or wrong; the app refuses to start rather than process messages wrongly. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  constructor(readonly problems: readonly SettingProblem[]) {
    super(`Invalid settings: ${problems.map((p) => `${p.setting}: ${p.problem}`).join('; ')}`);
  }
}
