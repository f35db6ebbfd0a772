import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// `npm run lint` runs dependency-cruiser with .dependency-cruiser.cjs (npm run lint:dependencies).
// Here each of its rules is shown to fire, on a small tree made to break it, so that a rule weakened
// by mistake (a regex that matches nothing) fails a test instead of passing every lint.
const repoRoot = process.cwd();
const cli = join(repoRoot, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) console.log(`Dependency rules: skipped because dependency-cruiser runs on Node 22 or later, and this is Node ${major}`);

const tree: Record<string, string> = {
  'tsconfig.test.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true }, include: ['src', 'functions'] }),
  'src/orders/internal.ts': 'export const x = 1;\n',
  'src/orders/index.ts': "export { x } from './internal.js';\n",
  'src/orders/sameFolder.ts': "import { x } from './internal.js';\nexport const own = x;\n",
  'src/shipments/reach.ts': "import { x } from '../orders/internal.js';\nexport const y = x;\n",
  'src/shipments/throughIndex.ts': "import { x } from '../orders/index.js';\nexport const z = x;\n",
  'src/a/one.ts': "import { two } from './two.js';\nexport const one = (): number => two();\n",
  'src/a/two.ts': "import { one } from './one.js';\nexport const two = (): number => one();\n",
  'functions/f.ts': "import '../src/telemetry/startup.js';\nimport { x } from '../src/orders/internal.js';\nexport const f = x;\n",
  'src/telemetry/startup.ts': 'export {};\n',
  'src/idempotency/core.ts': "import { x } from '../orders/index.js';\nexport const c = x;\n",
};

describe.runIf(major >= 22)('the dependency rules npm run lint checks (.dependency-cruiser.cjs)', () => {
  const root = mkdtempSync(join(tmpdir(), 'dependency-rules-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const cruise = (outputType: string) =>
    spawnSync(process.execPath, [cli, 'src', 'functions', '--config', join(repoRoot, '.dependency-cruiser.cjs'), '--output-type', outputType], {
      cwd: root,
      encoding: 'utf8',
    });
  // The `err` output is what the lint prints, and the only one whose exit status counts the errors.
  const lint = cruise('err');
  const run = cruise('json');
  const violations = (
    JSON.parse(run.stdout || '{"summary":{"violations":[]}}') as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } }
  ).summary.violations;
  const broken = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();

  it('fails the lint', () => {
    expect(lint.status, lint.stderr).not.toBe(0);
    expect(lint.stdout).toContain('4 dependency violations');
  });

  it('reports a cycle, a reach into another folder past its index, a function doing so, and the core importing the app: each once', () => {
    // A cycle is reported once, from the module dependency-cruiser meets first.
    expect(broken).toEqual([
      'core-imports-no-app: src/idempotency/core.ts -> src/orders/index.ts',
      'functions-through-the-index: functions/f.ts -> src/orders/internal.ts',
      'no-cycle: src/a/one.ts -> src/a/two.ts',
      'through-the-index: src/shipments/reach.ts -> src/orders/internal.ts',
    ]);
  });
});
