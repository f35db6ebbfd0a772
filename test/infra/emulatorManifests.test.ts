import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Each stand-in in emulators/ is a private npm workspace that declares its own dependencies, so that
// the app's manifest holds only what the app and its tests use. This keeps the declarations true.

type Manifest = { name: string; private?: boolean; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

const emulators = readdirSync('emulators', { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const root = JSON.parse(readFileSync('package.json', 'utf8')) as Manifest & { workspaces?: string[] };
const manifestOf = (name: string) => JSON.parse(readFileSync(join('emulators', name, 'package.json'), 'utf8')) as Manifest;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The packages a file imports by name: '@scope/name' or 'name', without a subpath; no node: built-ins. */
function packagesImportedBy(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const patterns = [/^\s*(?:import|export)\s[^;]*?\sfrom\s*'([^']+)'/gm, /^\s*import\s*'([^']+)'/gm, /\b(?:require(?:\.resolve)?|import)\(\s*'([^']+)'\s*\)/g];
  const specifiers = patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1] ?? ''));
  return specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s))
    .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : (s.split('/')[0] ?? s)));
}

const importsOf = (files: readonly string[]) => [...new Set(files.flatMap(packagesImportedBy))].sort();

describe("the stand-ins' manifests (emulators/*/package.json)", () => {
  it('are the workspaces of the repository, each private', () => {
    expect(root.workspaces).toEqual(['emulators/*']);
    expect(emulators.length).toBeGreaterThanOrEqual(6);
    for (const name of emulators) expect(manifestOf(name), name).toMatchObject({ name: `@idempotent-order-consumer/${name}`, private: true });
  });

  it.each(emulators)("%s declares every package its code imports, and its tests' in its devDependencies", (name) => {
    const manifest = manifestOf(name);
    const all = sourceFiles(join('emulators', name));
    const code = all.filter((f) => !f.includes(`${join('emulators', name, 'test')}`));
    const tests = all.filter((f) => !code.includes(f));
    const dependencies = Object.keys(manifest.dependencies ?? {});
    const declared = [...dependencies, ...Object.keys(manifest.devDependencies ?? {})];
    expect(importsOf(code).filter((p) => !dependencies.includes(p))).toEqual([]);
    expect(importsOf(tests).filter((p) => !declared.includes(p))).toEqual([]);
  });

  it('pin each package at the version the app pins it, where both declare it', () => {
    const pins = { ...root.devDependencies, ...root.dependencies };
    const differing = emulators.flatMap((name) => {
      const manifest = manifestOf(name);
      return Object.entries({ ...manifest.devDependencies, ...manifest.dependencies })
        .filter(([pkg, version]) => pins[pkg] !== undefined && pins[pkg] !== version)
        .map(([pkg, version]) => `${name}: ${pkg}@${version}, the app pins ${pins[pkg]}`);
    });
    expect(differing).toEqual([]);
  });
});
