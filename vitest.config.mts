import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each stand-in keeps its tests beside it (emulators/<name>/test/); they run with the app's.
    include: ['test/**/*.test.ts', 'emulators/*/test/**/*.test.ts'],
    globalSetup: ['test/support/cosmosGlobalSetup.ts'],
    // The stand-in for @azure/functions-core must be in place before any app.*() registration.
    setupFiles: ['test/support/functionsCoreStandIn.ts', 'test/support/testSettings.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // CI also writes the JSON report from which .ci/run prints its closing "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.vitest-results.json' }]] : ['default'],
  },
});
