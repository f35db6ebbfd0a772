import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.mts';

// What `npm run test:mutation` runs against each mutant: the unit and integration suites.
export default mergeConfig(base, defineConfig({ test: { include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'], reporters: ['default'] } }));
