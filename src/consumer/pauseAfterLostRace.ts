import { realSleep } from './consumerRuntime.js';
import type { ConsumerRuntime } from './consumerRuntime.js';

/** A short random pause after a lost race (up to 4 ms per attempt), so that writers contending for one order spread out. */
export async function pauseAfterLostRace(attempt: number, runtime: Pick<ConsumerRuntime, 'sleep' | 'random'>): Promise<void> {
  const random = runtime.random ?? Math.random;
  await (runtime.sleep ?? realSleep)(Math.floor(random() * 4 * attempt));
}
