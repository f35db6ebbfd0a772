import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each stand-in keeps its tests beside it (emulators/<name>/test/); they run with the app's.
    include: ['test/**/*.test.ts', 'emulators/*/test/**/*.test.ts'],
    globalSetup: ['test/support/cosmosGlobalSetup.ts'],
    // The stand-in for @azure/functions-core must be in place before any app.*() registration.
    setupFiles: ['test/support/functionsCoreStandIn.ts', 'test/support/testSettings.ts'],
    // At least two files at once, also on a 2-core machine (vitest's default there is one): most suites wait on
    // child processes, sockets and timers, not on the CPU. Measured on 2 cores, on a fresh clone: the whole suite
    // 681 s with one worker, 345 s with two, both green; CI runs it twice and must stay well under 30 minutes.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // CI also writes the JSON report from which .ci/run prints its closing "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
  },
});
