import { describe, expect, it } from 'vitest';
import { realSleep } from '../../../src/consumer/consumerRuntime.js';

// The pause every flow takes when no sleeper is injected: it must really wait, or a lost race would be
// retried at once, in a tight loop, against the instance it lost to.
describe('realSleep', () => {
  it('resolves only once its time has passed', async () => {
    let done = false;
    const pause = realSleep(40).then(() => (done = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    const startedAt = performance.now();
    await pause;
    expect(done).toBe(true);
    expect(performance.now() - startedAt).toBeGreaterThan(20);
  });
});
