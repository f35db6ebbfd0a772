import type { Scheduler } from 'fast-check';
import type { Timeline } from './timeline.js';

/** Whoever is running: a delivery's invocation, the sweeper, or the world itself. */
export interface Actor {
  readonly name: string;
  /** The message type a delivery runs (undefined for the sweeper and the world). */
  readonly messageType?: string;
  /** Awaits passed so far (store calls and pauses). */
  awaits: number;
  /** The await at which this actor dies, if it does. */
  readonly crashAt?: { readonly atAwait: number; readonly afterApplying: boolean };
  /** Called once when the actor dies: the world lets its lock expire and redelivers. */
  readonly onCrash?: () => void;
  /** What the old OrderPlaced read beside its gate read (world option `listBesideGateRead`). */
  prefetched?: { readonly partitionKey: string; readonly items: Promise<unknown[]> };
}

/** A promise that never settles: the dead worker's await. */
export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * Every await the flows make on the outside world (a store call, a pause) becomes a task of
 * fast-check's scheduler, labelled with who waits for what: fast-check decides which waiter goes
 * next, so every interleaving of the actors' steps is a schedule it can generate and shrink.
 * Each actor gets its own view of the store and its own sleeper (one flow context per delivery, as
 * each invocation is its own caller), so the flows need not know who they are.
 */
export class AwaitPoints {
  constructor(
    private readonly scheduler: Scheduler,
    readonly timeline: Timeline,
  ) {}

  /** Waits until the scheduler releases this step; reports whether the actor dies at it. */
  async pass(actor: Actor, label: string): Promise<{ readonly actor: Actor; readonly dies: boolean; readonly afterApplying: boolean }> {
    actor.awaits += 1;
    const at = actor.awaits;
    await this.scheduler.schedule(Promise.resolve(), `${actor.name}: ${label}`);
    const dies = actor.crashAt?.atAwait === at;
    return { actor, dies, afterApplying: dies && actor.crashAt?.afterApplying === true };
  }

  /** The actor dies here: logged, its lock left to expire; the caller returns `never()`. */
  die(actor: Actor, label: string): void {
    this.timeline.add(actor.name, `CRASHED at ${label}`);
    this.timeline.count('worker died');
    actor.onCrash?.();
  }

  /** The actor's sleeper: a pause is an interleaving point, never a real timer. */
  sleeperFor(actor: Actor): (ms: number) => Promise<void> {
    return async (ms) => {
      const label = `pause ${ms} ms`;
      const step = await this.pass(actor, label);
      if (step.dies) {
        this.die(actor, label);
        return never();
      }
    };
  }
}
