// npm run lint: the dependency rules of DESIGN.md, checked on the import graph (dependency-cruiser).
// A cycle anywhere, or a reach into another folder's internals from the app, fails the lint.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules that import each other, directly or through others: dependencies point one way.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'through-the-index',
      severity: 'error',
      comment: "A folder of src/ is used through its index.ts: its other files are its own to change. ($1 is the importer's folder.)",
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'] },
    },
    {
      name: 'functions-through-the-index',
      severity: 'error',
      comment:
        "The functions are thin: they use src/ through its folders' index.ts. startup.ts is imported for its effect, first, before any SDK loads: the index would load them.",
      from: { path: '^functions/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/[^/]+/index\\.ts$', '^src/telemetry/startup\\.ts$'] },
    },
    {
      name: 'core-imports-no-app',
      severity: 'error',
      comment: 'src/idempotency is the transport- and store-agnostic core: it imports nothing else of the app.',
      from: { path: '^src/idempotency/' },
      to: { path: '^(src|functions|dev|emulators)/', pathNot: '^src/idempotency/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|\\.stryker-tmp|reports)/' },
    tsConfig: { fileName: 'tsconfig.test.json' },
    tsPreCompilationDeps: true,
  },
};
