#!/usr/bin/env node
// npm run test:mutation: Stryker 10 needs Node 22 or later, as this project does (package.json engines).
// On a machine whose default Node is older, Node 22 is taken from the npm registry, pinned here, for this
// run only. Stryker reads and writes its incremental baseline as plain JSON; git keeps it compressed
// (tools/mutation/baseline.cjs), so it is unpacked before the run and packed again after a run that
// finished (one that was interrupted leaves a partial report, which must not replace the baseline).
// Then the scores are checked per folder and per file (tools/mutation/scores.cjs).
'use strict';
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const baseline = require('./baseline.cjs');

const node22 = '22.23.3';
const stryker = join(__dirname, '..', '..', 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
const args = [stryker, 'run', ...process.argv.slice(2)];
const major = Number(process.versions.node.split('.')[0]);

if (!baseline.restore()) console.log(`no mutation baseline at ${baseline.archiveName}: every mutant is tested`);
const run =
  major >= 22
    ? spawnSync(process.execPath, args, { stdio: 'inherit' })
    : spawnSync('npm', ['exec', '--yes', `--package=node@${node22}`, '--', 'node', ...args], { stdio: 'inherit' });
if (run.error) {
  console.error(`could not start Stryker: ${run.error.message}`);
  process.exit(2);
}
if (run.status !== 0) process.exit(run.status ?? 1);
console.log(`mutation baseline ${baseline.archiveName}: ${baseline.store()}`);
// Stryker prints its own table; this adds the bar per folder and per file, and fails below it.
const scores = spawnSync(process.execPath, [join(__dirname, 'scores.cjs')], { stdio: 'inherit' });
process.exit(scores.status ?? 1);
