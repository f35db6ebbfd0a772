// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import vitest from '@vitest/eslint-plugin';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // Plain-Node scripts that must run before anything is built (azd hooks, npm start).
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Nothing shipped may depend on the development stack or the tests.
    files: ['src/**/*.ts', 'functions/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['**/dev/**', '**/emulators/**', '**/test/**'] }],
    },
  },
  {
    // The core stays transport- and store-agnostic: it is the part other teams lift out.
    files: ['src/idempotency/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@azure/*', '@opentelemetry/*', '../*', '**/dev/**', '**/emulators/**', '**/test/**'] }],
    },
  },
  {
    // A stand-in stands on its own: none imports the app, the dev tools, the tests or another stand-in
    // (what they share is in emulator-kit). The one exception is by design: the carrier reads
    // Idempotency-Key with the module our client writes it with (src/http/idempotencyKeyHeader.ts).
    files: ['emulators/**/*.ts'],
    ignores: ['emulators/*/test/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^\\.\\./(?!emulator-kit/)[^.]', message: 'A stand-in imports no other stand-in: what they share is in emulator-kit.' },
            { regex: '/(dev|test)/', message: 'A stand-in imports neither the dev tools nor the tests.' },
            { regex: '/src/(?!http/idempotencyKeyHeader\\.js$)', message: 'A stand-in does not import the app.' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'emulators/*/test/**/*.ts'],
    plugins: { vitest },
    rules: {
      ...vitest.configs.recommended.rules,
      'vitest/no-focused-tests': 'error',
      'vitest/no-disabled-tests': 'error',
      'vitest/expect-expect': ['error', { assertFunctionNames: ['expect', 'expect*', 'assert*'] }],
      // expect(value, message): the message says what was checked when it fails.
      'vitest/valid-expect': ['error', { maxArgs: 2 }],
    },
  },
);
