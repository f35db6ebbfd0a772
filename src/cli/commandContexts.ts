import type { DlqContext } from './dlqCommands.js';
import type { ParkedContext } from './parkedCommands.js';

/**
 * How a command group reaches Service Bus and Cosmos DB: opened when its action runs (with the global
 * options as parsed then), checked, and closed after it.
 */
export interface CommandContexts {
  /** The dead-letter queue the global options name. */
  readonly deadLetters: (run: (ctx: DlqContext) => Promise<void>) => Promise<void>;
  /** The orders container; with `needsQueue`, the orders queue too (to resubmit). */
  readonly store: (needsQueue: boolean, run: (ctx: ParkedContext) => Promise<void>) => Promise<void>;
}
