import { classifyStoreFailure } from '../../../src/cosmos/storeErrors.js';
import type { DocumentStore } from '../../../src/idempotency/index.js';
import { never } from './awaitPoints.js';
import type { Actor, AwaitPoints } from './awaitPoints.js';

/** A read or query Cosmos refuses (throttled, unavailable, timed out): nothing is returned, nothing changed. */
export type ReadFate = 'answered' | 'refused-429' | 'refused-503' | 'refused-408';

/** The n-th read or query served across the world (a counter the world's stores share). */
export class ReadFates {
  private served = 0;
  constructor(readonly fates: readonly ReadFate[]) {}
  next(): ReadFate {
    const fate = this.fates[this.served] ?? 'answered';
    this.served += 1;
    return fate;
  }
}

/**
 * The actor's scheduled store with refused reads: a refused read is its own await point (the
 * actor may die there too) and then throws the adapter's TransientStoreError. The shared
 * ScheduledStore gives fates to writes only; the outbox and intake worlds add these for reads.
 */
export function withReadFates(store: DocumentStore, actor: Actor, points: AwaitPoints, fates: ReadFates): DocumentStore {
  const refuse = async (label: string, fate: ReadFate): Promise<never> => {
    const step = await points.pass(actor, label);
    if (step.dies) {
      points.die(actor, label);
      return never();
    }
    points.timeline.add(actor.name, `${label} -> REFUSED (${fate})`);
    points.timeline.count('read refused');
    throw classifyStoreFailure(Object.assign(new Error(`status ${fate.split('-')[1]}`), { code: Number(fate.split('-')[1]) }), 'read');
  };
  return {
    read: (partitionKey, id) => {
      const fate = fates.next();
      return fate === 'answered' ? store.read(partitionKey, id) : refuse(`read ${partitionKey}/${id}`, fate);
    },
    find: (query) => {
      const fate = fates.next();
      return fate === 'answered' ? store.find(query) : refuse(`find ${query.docType}`, fate);
    },
    commit: (partitionKey, operations) => store.commit(partitionKey, operations),
  };
}
