import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { deploymentPackageFiles } from './packagedAppFiles.js';

// What `azd deploy` zips: every file of the project that .funcignore does not exclude (azd reads it
// with gitignore rules). Remote build is on, so Azure installs dependencies from the lock file and
// compiles the TypeScript: the package must carry exactly what that needs, and nothing else.
function walk(dir: string, root = dir, into: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path);
    if (rel === '.git') continue;
    if (entry.isDirectory()) walk(path, root, into);
    else into.push(rel);
  }
  return into;
}

// Read as packagedApp.test.ts reads it: symbolic links followed (a worktree's node_modules is one),
// excluded folders never walked.
const packaged = deploymentPackageFiles('.', readFileSync('.funcignore', 'utf8'));
const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as {
  main: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const sources = (dir: string) => walk(dir, '.').filter((p) => p.endsWith('.ts'));

describe('the deployment package (.funcignore, remote build)', () => {
  it('is built remotely, as azure.yaml says', () => {
    const azureYaml = parseYaml(readFileSync('azure.yaml', 'utf8')) as { services: { api: { remoteBuild?: unknown } } };
    expect(azureYaml.services.api.remoteBuild).toBe(true);
  });

  it("holds the app's sources and what the remote build needs to install and compile them", () => {
    expect(packaged).toEqual(expect.arrayContaining(['host.json', 'package.json', 'package-lock.json', 'tsconfig.json']));
    for (const file of [...sources('src'), ...sources('functions')]) expect(packaged, file).toContain(file);
    expect(packageJson.scripts.build).toBe('tsc -p tsconfig.json');
    expect(packageJson.main).toBe('dist/functions/*.js');
    const tsconfig = JSON.parse(readFileSync('tsconfig.json', 'utf8')) as { include: string[]; compilerOptions: { outDir: string } };
    expect(tsconfig).toMatchObject({ include: ['functions/**/*.ts', 'src/**/*.ts'], compilerOptions: { outDir: 'dist' } });
  });

  it('holds nothing of this machine or of development: no node_modules, build output, settings, tests or tools', () => {
    const outsiders = packaged.filter(
      (p) => /^(node_modules|dist|dev|emulators|test|bench|tools|infra|docs|coverage|\.ci|\.azure)\//.test(p) || /^local\.settings/.test(p),
    );
    expect(outsiders).toEqual([]);
    expect(
      packaged.every(
        (p) => /^(src|functions)\/.*\.ts$/.test(p) || ['host.json', 'package.json', 'package-lock.json', 'tsconfig.json', '.funcignore'].includes(p),
      ),
      packaged.join('\n'),
    ).toBe(true);
  });

  // The sources and the lockfile the remote build installs from (about 1.2 MB now, half of it the
  // lockfile): the bound is there to catch what must never ship (node_modules, fixtures, reports:
  // tens of megabytes), not to count the app's own lines.
  it('stays small: under 2 MiB before compression', () => {
    const bytes = packaged.reduce((sum, p) => sum + statSync(p).size, 0);
    expect(bytes).toBeLessThan(2 * 1024 * 1024);
  });

  it('needs only production dependencies at run time: the app imports no devDependency', () => {
    const imported = new Set<string>();
    for (const file of [...sources('src'), ...sources('functions')]) {
      for (const m of readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*?from '([^.'][^']*)'/gm)) {
        const name = m[1] ?? '';
        imported.add(name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : (name.split('/')[0] ?? name));
      }
    }
    const external = [...imported].filter((n) => !n.startsWith('node:') && !builtinModules.includes(n));
    expect(external.length).toBeGreaterThan(3);
    expect(external.filter((n) => !(n in packageJson.dependencies))).toEqual([]);
  });
});
