import { classifyStoreFailure } from '../../../src/cosmos/storeErrors.js';

/**
 * What happens to one write the store is asked for:
 * - `applied`: the store applies it and the caller hears the answer;
 * - `refused-<status>`: Cosmos refuses it before applying anything (throttled, unavailable, timed
 *   out at the gateway) and the caller sees the adapter's TransientStoreError;
 * - `lost-<status>`: the write is applied, then the answer is lost (a timeout, a connection reset):
 *   the ambiguous write. The caller sees the same error as for a refusal and cannot tell them apart.
 */
export type WriteFate = 'applied' | 'refused-429' | 'refused-503' | 'refused-408' | 'lost-408' | 'lost-reset';

export function isApplied(fate: WriteFate): boolean {
  return fate === 'applied' || fate.startsWith('lost-');
}

/** The error the Cosmos adapter throws for this fate (src/cosmos/storeErrors.ts), built by the same function. */
export function errorFor(fate: Exclude<WriteFate, 'applied'>): Error {
  if (fate === 'lost-reset') return classifyStoreFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'executeBatch');
  const status = Number(fate.split('-')[1]);
  return classifyStoreFailure(Object.assign(new Error(`status ${status}`), { code: status }), 'executeBatch');
}

/** An invocation abandoned at its n-th await (store call or pause), as a SIGKILLed worker: nothing after it runs. */
export interface CrashPoint {
  /** Which delivery, counted in the order deliveries start (0-based). */
  readonly delivery: number;
  /** At which of its awaits (1-based). */
  readonly atAwait: number;
  /** When that await is a write: applied before the worker died (the write happened, nobody heard). */
  readonly afterApplying: boolean;
}
