#!/usr/bin/env node
// The incremental mutation baseline, kept in git as reports/stryker-incremental.json.gz: Stryker writes
// 10 MB of indented JSON (reports/stryker-incremental.json, git-ignored), whose every refresh would be a
// multi-megabyte text diff. Before a run the plain file is written from the archive; after a run that
// finished, the plain file is reduced to its canonical form and archived again, only if what it holds
// changed, so an unchanged baseline stays an unchanged file whatever zlib the machine has.
//
// The canonical form keeps everything Stryker 10's incremental mode reads (IncrementalDiffer in
// @stryker-mutator/core: each file's source and mutants, each with every field it uses; each test file's
// source and tests) and orders it, because Stryker numbers tests in the order the runner reported them
// and mutants in the order it found them, which vary from one run to the next:
// - files, test files and every object's keys sorted; mutants sorted by location, mutator, replacement;
//   tests by position and name;
// - tests and mutants numbered afresh in that order, and each mutant's coveredBy and killedBy mapped to
//   the new test numbers and sorted (Stryker reads both as sets). A test number no test carries is
//   dropped: Stryker skips it anyway, and kept it could name a test after renumbering;
// - what a run scoped with --mutate writes differently for the mutants it did not run, although it
//   means the same to Stryker, written one way (see canonicalMutant);
// - the run's own metadata dropped (projectRoot, config, thresholds, the dependency list and branding):
//   Stryker reads only files and testFiles back, and projectRoot differs on every machine;
// - one line per source file and per test file, each line compressed on its own (see compress).
'use strict';
const { Buffer } = require('node:buffer');
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const { gunzipSync, gzipSync, constants } = require('node:zlib');

const root = join(__dirname, '..', '..');
const plainPath = join(root, 'reports', 'stryker-incremental.json');
const archivePath = `${plainPath}.gz`;

const byPosition = (a, b) => a.line - b.line || a.column - b.column;
const byText = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const sortedKeys = (record) => Object.keys(record).sort(byText);

function compareMutants(a, b) {
  return (
    byPosition(a.location.start, b.location.start) ||
    byPosition(a.location.end, b.location.end) ||
    byText(a.mutatorName, b.mutatorName) ||
    byText(a.replacement ?? '', b.replacement ?? '')
  );
}

const noPosition = { line: 0, column: 0 };
function compareTests(a, b) {
  return byPosition(a.location?.start ?? noPosition, b.location?.start ?? noPosition) || byText(a.name, b.name);
}

/** Test files in name order, tests in position order, numbered afresh; returns the old-to-new ids. */
function renumberTests(testFiles) {
  const newIdOf = new Map();
  const files = {};
  for (const name of sortedKeys(testFiles)) {
    const file = testFiles[name];
    const tests = [...file.tests].sort(compareTests).map((test) => {
      const id = String(newIdOf.size);
      newIdOf.set(test.id, id);
      return { ...test, id };
    });
    files[name] = { ...file, tests };
  }
  return { files, newIdOf };
}

/** Test ids in the new numbering, each once, in order; undefined for none (Stryker reads both alike). */
function toNewIds(ids, newIdOf) {
  const mapped = [...new Set(ids.map((id) => newIdOf.get(id)).filter((id) => id !== undefined))];
  return mapped.length === 0 ? undefined : mapped.sort((a, b) => a - b);
}

/**
 * One mutant as the baseline keeps it. Left out: `static`, which Stryker decides afresh for every
 * mutant of every run (MutantTestPlanner.planMutant overwrites it), and `relativeFileName`, its own
 * bookkeeping that a run scoped with --mutate leaks into the report (recomputed when read back).
 * The killing tests are added to the covering ones: Stryker reads the two as one coverage row
 * (collectOldKilledAndCoverageMatrix), and a scoped run writes them so for the mutants it did not run.
 */
function canonicalMutant(mutant, id, newIdOf) {
  const { static: _static, relativeFileName: _relativeFileName, ...kept } = mutant;
  const killedBy = mutant.killedBy ?? [];
  return {
    ...kept,
    id,
    coveredBy: toNewIds([...(mutant.coveredBy ?? []), ...killedBy], newIdOf),
    killedBy: toNewIds(killedBy, newIdOf),
  };
}

function renumberMutants(files, newIdOf) {
  let next = 0;
  const result = {};
  for (const name of sortedKeys(files)) {
    const file = files[name];
    const mutants = [...file.mutants].sort(compareMutants).map((mutant) => canonicalMutant(mutant, String(next++), newIdOf));
    result[name] = { ...file, mutants };
  }
  return result;
}

/** JSON with every object's keys sorted; array order is the caller's. */
function stableStringify(value) {
  return JSON.stringify(value, (_key, v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(sortedKeys(v).map((k) => [k, v[k]])) : v,
  );
}

/** A JSON object with one entry per line, so that each source or test file's results is a line. */
const linePerEntry = (record) => `{${Object.entries(record).map(([name, value]) => `\n${JSON.stringify(name)}:${stableStringify(value)}`)}}`;

/** The canonical text of a Stryker incremental report (see the top of this file). */
function canonicalize(report) {
  if (report === null || typeof report !== 'object' || typeof report.files !== 'object' || report.files === null) {
    throw new Error('not a Stryker incremental report: it has no "files" object');
  }
  const { files: testFiles, newIdOf } = renumberTests(report.testFiles ?? {});
  const framework = report.framework && { name: report.framework.name, version: report.framework.version };
  return (
    `{"files":${linePerEntry(renumberMutants(report.files, newIdOf))},` +
    `"framework":${stableStringify(framework)},"schemaVersion":${stableStringify(report.schemaVersion)},` +
    `"testFiles":${linePerEntry(testFiles)}}\n`
  );
}

// The gzip header's OS byte says which system wrote it (3 on Unix, 10 on Windows); "unknown" on all.
const osByte = 9;
const osUnknown = 255;

/** Deterministic gzip of one piece: no name, mtime 0 (Node writes neither), one level, one OS byte. */
function gzipMember(piece) {
  const bytes = gzipSync(piece, { level: constants.Z_BEST_COMPRESSION });
  bytes[osByte] = osUnknown;
  return bytes;
}

/**
 * One gzip member per line (gzip allows several; gunzip and zcat read them as one text). A refresh
 * then changes only the members of the files whose results moved, and git stores the new archive
 * as a small delta of the old one instead of a whole new object.
 */
function compress(text) {
  return Buffer.concat(text.split(/(?<=\n)/).map(gzipMember));
}

const decompress = (bytes) => gunzipSync(bytes).toString('utf8');

/** Writes the plain baseline Stryker reads from the archive; false when there is no archive. */
function restore(archive = archivePath, plain = plainPath) {
  if (!existsSync(archive)) return false;
  writeFileSync(plain, decompress(readFileSync(archive)));
  return true;
}

/**
 * Archives the plain baseline Stryker wrote, in canonical form: 'written', 'unchanged' when the archive
 * already holds it, 'absent' when there is nothing to archive (a run with incremental mode off).
 */
function store(plain = plainPath, archive = archivePath) {
  if (!existsSync(plain)) return 'absent';
  const text = canonicalize(JSON.parse(readFileSync(plain, 'utf8')));
  if (existsSync(archive) && decompress(readFileSync(archive)) === text) return 'unchanged';
  writeFileSync(archive, compress(text));
  return 'written';
}

/** The archive's path as a person would type it. */
const archiveName = relative(process.cwd(), archivePath);

module.exports = { canonicalize, compress, decompress, restore, store, plainPath, archivePath, archiveName };

if (require.main === module) {
  const command = process.argv[2];
  if (command === 'restore') {
    console.log(restore() ? `baseline unpacked from ${archiveName}` : `no baseline at ${archiveName}`);
  } else if (command === 'store') {
    console.log(`${archiveName}: ${store()}`);
  } else {
    console.error('usage: node tools/mutation/baseline.cjs restore|store');
    process.exit(2);
  }
}
