import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.mts';

// What `npm run test:mutation` runs against each mutant: the unit and integration suites. A mutant
// that makes a test wait for something that never comes fails it in 15 s instead of 30.
export default mergeConfig(base, defineConfig({ test: { include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'], reporters: ['default'], testTimeout: 15_000 } }));
