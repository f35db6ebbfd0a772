import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archivePath, canonicalize, compress, decompress, restore, store } from '../../../tools/mutation/baseline.cjs';

interface Mutant {
  readonly id: string;
  readonly coveredBy?: readonly string[];
  readonly killedBy?: readonly string[];
  readonly [field: string]: unknown;
}
interface Test {
  readonly id: string;
  readonly name: string;
  readonly location?: { readonly start: { readonly line: number; readonly column: number } };
}
interface Report {
  files: Record<string, { mutants: Mutant[]; readonly source: string; readonly language: string }>;
  testFiles: Record<string, { tests: Test[]; readonly source?: string }>;
  [field: string]: unknown;
}

/** The one element the fixture has there: a missing one fails the test that asked. */
function the<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the fixture has no such element');
  return value;
}
const mutantsOf = (r: Report, file: string) => the(r.files[file]).mutants;
const testsOf = (r: Report, file: string) => the(r.testFiles[file]).tests;

// Two tests and three mutants, as Stryker 10 writes them: ids in run order, keys in any order.
const at = (line: number, column: number) => ({ line, column });
const source = 'export const a = 1;\n';
const testSource = "it('one', () => {});\nit('two', () => {});\n";
const report = (): Report => ({
  schemaVersion: '1.0',
  projectRoot: '/home/someone/project',
  config: { concurrency: 2 },
  thresholds: { high: 90, low: 80, break: null },
  framework: { name: 'StrykerJS', version: '10.1.1', dependencies: { typescript: '5.9.3' } },
  testFiles: {
    'test/a.test.ts': {
      source: testSource,
      tests: [
        { id: '7', name: 'two', location: { start: at(2, 1) } },
        { id: '3', name: 'one', location: { start: at(1, 1) } },
      ],
    },
  },
  files: {
    'src/b.ts': {
      language: 'typescript',
      source,
      mutants: [
        {
          id: '9',
          mutatorName: 'StringLiteral',
          replacement: '""',
          status: 'Survived',
          coveredBy: ['3'],
          killedBy: [],
          location: { start: at(1, 1), end: at(1, 2) },
        },
      ],
    },
    'src/a.ts': {
      source,
      language: 'typescript',
      mutants: [
        {
          id: '4',
          mutatorName: 'ArithmeticOperator',
          replacement: '-',
          status: 'Killed',
          statusReason: 'expected 1 to be 2',
          testsCompleted: 2,
          duration: 31,
          coveredBy: ['3', '99'],
          killedBy: ['7'],
          location: { start: at(1, 14), end: at(1, 19) },
        },
        {
          id: '2',
          mutatorName: 'BooleanLiteral',
          replacement: 'false',
          status: 'Ignored',
          static: true,
          coveredBy: [],
          location: { start: at(1, 1), end: at(1, 5) },
        },
      ],
    },
  },
});

const parse = (text: string) => JSON.parse(text) as Report;
const testNames = (c: Report, ids: readonly string[] | undefined) =>
  (ids ?? []).map(
    (id) =>
      Object.values(c.testFiles)
        .flatMap((f) => f.tests)
        .find((t) => t.id === id)?.name,
  );

describe('the mutation baseline (tools/mutation/baseline.cjs)', () => {
  describe('canonicalize', () => {
    it('writes the same text for the same results whatever order Stryker numbered and listed them in', () => {
      const shuffled = report();
      the(shuffled.testFiles['test/a.test.ts']).tests = [
        { id: '0', name: 'one', location: { start: at(1, 1) } },
        { id: '1', name: 'two', location: { start: at(2, 1) } },
      ];
      const [killed, ignored] = mutantsOf(shuffled, 'src/a.ts');
      the(shuffled.files['src/a.ts']).mutants = [
        { ...the(ignored), id: '0' },
        { ...the(killed), id: '1', coveredBy: ['0'], killedBy: ['1'] },
      ];
      the(shuffled.files['src/b.ts']).mutants = [{ ...the(mutantsOf(shuffled, 'src/b.ts')[0]), id: '2', coveredBy: ['0'] }];
      shuffled.projectRoot = '/elsewhere';
      expect(canonicalize(shuffled)).toBe(canonicalize(report()));
    });

    it('keeps every field Stryker uses of every mutant and test, each coverage row naming the same tests', () => {
      const c = parse(canonicalize(report()));
      const [ignored, killed] = mutantsOf(c, 'src/a.ts').map(the);
      expect(killed).toMatchObject({
        mutatorName: 'ArithmeticOperator',
        replacement: '-',
        status: 'Killed',
        statusReason: 'expected 1 to be 2',
        testsCompleted: 2,
        duration: 31,
      });
      expect(the(killed).location).toEqual({ start: at(1, 14), end: at(1, 19) });
      expect(testNames(c, the(killed).coveredBy), 'the killing test is a covering one; a test id no test carries is dropped').toEqual(['one', 'two']);
      expect(testNames(c, the(killed).killedBy)).toEqual(['two']);
      expect(ignored).toMatchObject({ status: 'Ignored', mutatorName: 'BooleanLiteral' });
      expect(ignored, 'Stryker decides it afresh on every run').not.toHaveProperty('static');
      expect(testNames(c, the(mutantsOf(c, 'src/b.ts')[0]).coveredBy)).toEqual(['one']);
      expect(the(c.files['src/a.ts']).source).toBe(source);
      expect(the(c.testFiles['test/a.test.ts']).source).toBe(testSource);
    });

    it('writes what a run scoped with --mutate reports of the mutants it did not run as a whole run reports them', () => {
      const scoped = report();
      the(scoped.files['src/a.ts']).mutants = mutantsOf(scoped, 'src/a.ts').map((m) => ({
        ...m,
        static: false,
        relativeFileName: 'src/a.ts',
        coveredBy: [...(m.coveredBy ?? []), ...(m.killedBy ?? [])],
        killedBy: m.killedBy ?? [],
      }));
      expect(canonicalize(scoped)).toBe(canonicalize(report()));
    });

    it('numbers tests and mutants afresh in file and position order, unique across the report', () => {
      const c = parse(canonicalize(report()));
      expect(Object.keys(c.files)).toEqual(['src/a.ts', 'src/b.ts']);
      expect(Object.values(c.files).flatMap((f) => f.mutants.map((m) => m.id))).toEqual(['0', '1', '2']);
      expect(testsOf(c, 'test/a.test.ts').map((t) => [t.id, t.name])).toEqual([
        ['0', 'one'],
        ['1', 'two'],
      ]);
    });

    it('drops what Stryker does not read back: the project root, the configuration, the dependency list', () => {
      const c = parse(canonicalize(report()));
      expect(Object.keys(c).sort()).toEqual(['files', 'framework', 'schemaVersion', 'testFiles']);
      expect(c.framework).toEqual({ name: 'StrykerJS', version: '10.1.1' });
    });

    it('refuses what is not an incremental report, naming what is missing', () => {
      expect(() => canonicalize({ testFiles: {} })).toThrow('not a Stryker incremental report: it has no "files" object');
      expect(() => canonicalize(null)).toThrow('no "files" object');
    });
  });

  describe('compress', () => {
    it('writes the same bytes for the same text: no name, no time, one level, the OS byte "unknown"', () => {
      const text = canonicalize(report());
      const bytes = compress(text);
      expect(compress(text).equals(bytes)).toBe(true);
      expect([...bytes.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
      expect(decompress(bytes)).toBe(text);
    });

    it('compresses each line on its own, so a change to the results of one file leaves the bytes of the others as they were', () => {
      const text = canonicalize(report());
      const lines = text.split('\n').slice(0, -1);
      expect(lines.length, 'one line that opens the report, then one per source file and one per test file').toBe(4);
      expect(compress(text).equals(Buffer.concat(lines.map((line) => compress(`${line}\n`))))).toBe(true);
    });
  });

  describe('restore and store', () => {
    let dir: string;
    let plain: string;
    let archive: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'mutation-baseline-'));
      plain = join(dir, 'stryker-incremental.json');
      archive = `${plain}.gz`;
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('archives what Stryker wrote in canonical form, and unpacks it for the next run', () => {
      writeFileSync(plain, JSON.stringify(report(), null, 2));
      expect(store(plain, archive)).toBe('written');
      rmSync(plain);
      expect(restore(archive, plain)).toBe(true);
      expect(readFileSync(plain, 'utf8')).toBe(canonicalize(report()));
    });

    it('leaves the archive byte for byte as it is when its content did not change, whichever zlib wrote it', () => {
      const otherZlib = gzipSync(canonicalize(report()), { level: 1 });
      writeFileSync(archive, otherZlib);
      const renumbered = report();
      renumbered.projectRoot = '/another/machine';
      writeFileSync(plain, JSON.stringify(renumbered));
      expect(store(plain, archive)).toBe('unchanged');
      expect(readFileSync(archive).equals(otherZlib)).toBe(true);
    });

    it('rewrites the archive when a result changed', () => {
      writeFileSync(plain, JSON.stringify(report()));
      store(plain, archive);
      const changed = report();
      const [survived] = mutantsOf(changed, 'src/b.ts');
      the(changed.files['src/b.ts']).mutants = [{ ...the(survived), status: 'Killed' }];
      writeFileSync(plain, JSON.stringify(changed));
      expect(store(plain, archive)).toBe('written');
      expect(the(mutantsOf(parse(decompress(readFileSync(archive))), 'src/b.ts')[0]).status).toBe('Killed');
    });

    it('says so when there is nothing to unpack or to archive', () => {
      expect(restore(archive, plain)).toBe(false);
      expect(existsSync(plain)).toBe(false);
      expect(store(plain, archive)).toBe('absent');
      expect(existsSync(archive)).toBe(false);
    });
  });

  it('the committed baseline is in canonical form, so an unchanged run leaves it unchanged', () => {
    expect(statSync(archivePath).size, 'the archive stays small').toBeLessThan(2_000_000);
    const text = decompress(readFileSync(archivePath));
    expect(canonicalize(JSON.parse(text))).toBe(text);
  });
});
