import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const scripts = Object.keys((JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts).sort();
const docs = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** The package scripts a text runs: `npm run <name>`, and `npm test` / `npm start`, npm's shorthands. */
function scriptsRunIn(text: string): string[] {
  const runs = [...text.matchAll(/\bnpm run ([\w-]+(?::[\w-]+)*)/g)].map((m) => m[1] ?? '');
  const shorthands = [...text.matchAll(/\bnpm (test|start)\b/g)].map((m) => m[1] ?? '');
  return [...new Set([...runs, ...shorthands])].sort();
}

describe('the npm commands the docs give', () => {
  it.each(docs)('%s runs only scripts package.json has', (doc) => {
    expect(scriptsRunIn(readFileSync(doc, 'utf8')).filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it('the README names the commands a newcomer needs (install, the local stack, the tests), and the README with CONTRIBUTING.md names every script', () => {
    const readme = readFileSync('README.md', 'utf8');
    expect(readme).toContain('npm ci');
    expect(scriptsRunIn(readme)).toEqual(expect.arrayContaining(['local', 'test', 'start', 'dlq']));
    const named = new Set([...scriptsRunIn(readme), ...scriptsRunIn(readFileSync('CONTRIBUTING.md', 'utf8'))]);
    expect(scripts.filter((name) => !named.has(name))).toEqual([]);
  });
});
