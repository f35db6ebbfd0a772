#!/usr/bin/env node
// The score per core folder and per file, from Stryker's JSON report, against this project's bar:
// at least 90 % in every folder and 80 % in every file (Stryker's own `thresholds.break` knows only
// the total). Exit 1 below either, 2 when there is no report to read.
'use strict';
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

const folderBar = 90;
const fileBar = 80;
const detected = new Set(['Killed', 'Timeout']);
const undetected = new Set(['Survived', 'NoCoverage']);

// A static mutant (in code that runs when a module loads) is not run (`ignoreStatic`: each would cost
// the whole suite); one that an older baseline ran keeps its result in the report, from the one test
// that happened to import its module first. Counted as excluded either way, so every run counts alike.
function tally(mutants) {
  const t = { detected: 0, undetected: 0, ignored: 0 };
  for (const m of mutants) {
    if (m.static === true) t.ignored += 1;
    else if (detected.has(m.status)) t.detected += 1;
    else if (undetected.has(m.status)) t.undetected += 1;
    else t.ignored += 1;
  }
  return t;
}

const score = (t) => (t.detected + t.undetected === 0 ? 100 : (100 * t.detected) / (t.detected + t.undetected));

/** src/orders/x.ts belongs to src/orders; a file directly under src/ is a core part of its own. */
const folderOf = (path) => (dirname(path) === 'src' ? path : dirname(path));

function check(report) {
  const files = Object.entries(report.files).map(([path, f]) => ({ path: path.replace(/\\/g, '/'), ...tally(f.mutants) }));
  const folders = new Map();
  for (const f of files) {
    const key = folderOf(f.path);
    const t = folders.get(key) ?? { detected: 0, undetected: 0, ignored: 0, files: [] };
    t.detected += f.detected;
    t.undetected += f.undetected;
    t.ignored += f.ignored;
    t.files.push(f);
    folders.set(key, t);
  }
  const lines = [];
  const failures = [];
  for (const [folder, t] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    const s = score(t);
    lines.push(
      `${s.toFixed(1).padStart(6)} %  ${folder}  (${t.detected} of ${t.detected + t.undetected} detected${t.ignored ? `, ${t.ignored} excluded` : ''})`,
    );
    if (s < folderBar) failures.push(`${folder}: ${s.toFixed(1)} % is below ${folderBar} % for a folder`);
    if (t.files.length === 1 && t.files[0].path === folder) continue;
    for (const f of t.files.sort((a, b) => a.path.localeCompare(b.path))) {
      const fs = score(f);
      lines.push(`${fs.toFixed(1).padStart(14)} %  ${f.path}  (${f.undetected} undetected)`);
      if (fs < fileBar) failures.push(`${f.path}: ${fs.toFixed(1)} % is below ${fileBar} % for a file`);
    }
  }
  const all = tally(Object.values(report.files).flatMap((f) => f.mutants));
  lines.push(`${score(all).toFixed(1).padStart(6)} %  all  (${all.detected} of ${all.detected + all.undetected} detected)`);
  return { lines, failures };
}

module.exports = { check, folderBar, fileBar };

if (require.main === module) {
  const path = process.argv[2] ?? join(__dirname, '..', '..', 'reports', 'mutation', 'mutation.json');
  if (!existsSync(path)) {
    console.error(`no mutation report at ${path}: run npm run test:mutation first`);
    process.exit(2);
  }
  const { lines, failures } = check(JSON.parse(readFileSync(path, 'utf8')));
  console.log(['mutation score per core folder and file (detected = killed or timed out):', ...lines].join('\n'));
  if (failures.length > 0) {
    console.error(['below the bar:', ...failures.map((f) => `  ${f}`)].join('\n'));
    process.exit(1);
  }
  console.log(`every folder at least ${folderBar} %, every file at least ${fileBar} %`);
}
