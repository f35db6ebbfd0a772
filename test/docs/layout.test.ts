import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The folders the project layout must name: every tracked folder, at every depth. */
function repositoryFolders(): string[] {
  const files = execFileSync('git', ['ls-files'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const folders = new Set<string>();
  for (const parts of files.map((f) => f.split('/'))) {
    for (let depth = 1; depth < parts.length; depth += 1) folders.add(`${parts.slice(0, depth).join('/')}/`);
  }
  return [...folders].sort();
}

/** The folders docs/architecture.md's "Project layout" tree names: a line that starts with a path ending in "/". */
function layoutFolders(): string[] {
  const architecture = readFileSync('docs/architecture.md', 'utf8');
  const section = architecture.slice(architecture.indexOf('## Project layout'));
  const tree = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return tree.split('\n').flatMap((line) => /^(\S+\/)\s/.exec(line)?.[1] ?? []);
}

describe('the project layout (docs/architecture.md)', () => {
  it('names every folder of the repository, at every depth, and no folder that is not there', () => {
    const named = layoutFolders();
    expect(named.length).toBeGreaterThan(20);
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual(repositoryFolders());
  });
});
