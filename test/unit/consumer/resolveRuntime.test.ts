import { describe, expect, it } from 'vitest';
import { resolveRuntime } from '../../../src/consumer/index.js';
import type { Settings } from '../../../src/config.js';
import { InMemoryDocumentStore } from '../../../src/idempotency/index.js';

const settings = { markerTtlSeconds: 600, maxConcurrencyAttempts: 7 } as Settings;

describe('the runtime the composition roots resolve', () => {
  it('takes the pauses and their jitter given to it, and the limits from the settings', () => {
    const store = new InMemoryDocumentStore();
    const sleep = async () => undefined;
    const random = () => 0.25;
    const runtime = resolveRuntime(settings, { store, sleep, random });
    expect(runtime).toMatchObject({ store, sleep, random, markerTtlSeconds: 600, maxConcurrencyAttempts: 7 });
  });

  it('leaves the pauses and the jitter to their defaults when none is given', () => {
    const runtime = resolveRuntime(settings, { store: new InMemoryDocumentStore() });
    expect('sleep' in runtime || 'random' in runtime).toBe(false);
    expect(runtime.now().getTime()).toBeGreaterThan(0);
  });
});
