import { defineConfig } from 'vitest/config';
import base from './vitest.config.mts';

// What `npm run test:mutation` runs against each mutant: the unit and integration suites of the
// core. The suites that test only the stand-ins (emulators/*/test, outside this include; and in
// test/, the dev/ tools and Azurite for Core Tools) cannot catch a mutant of src/ and are left out: Stryker runs the whole list for
// every mutant of code that runs when a module loads (a schema, a table of defaults), so each
// second here costs minutes there. `include` is replaced, not merged: mergeConfig would append it
// to the base's `test/**` and bring the e2e suites back. A mutant that makes a test wait for
// something that never comes fails it in 15 s instead of 30.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    exclude: [
      // Exploration runs hundreds of generated schedules per property: bounded in npm test, too dear per mutant.
      'test/explore/**',
      '**/*.explore.test.ts',
      'test/unit/dev/**',
      'test/integration/azurite.test.ts',
    ],
    reporters: ['default'],
    testTimeout: 15_000,
  },
});
