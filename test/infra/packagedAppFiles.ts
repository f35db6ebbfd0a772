import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ignore from 'ignore';

/**
 * The files `azd deploy` zips for a Functions service: every file under the service's folder that
 * its .funcignore does not exclude, read with gitignore rules (azd's "Configure service packaging
 * file exclusions": learn.microsoft.com/azure/developer/azure-developer-cli/service-packaging-ignore-files).
 * Symbolic links are followed (a worktree's node_modules may be one); an excluded folder is never walked.
 */
export function deploymentPackageFiles(root: string, funcignore: string): string[] {
  const rules = ignore().add(funcignore);
  const walk = (rel: string): string[] =>
    readdirSync(join(root, rel)).flatMap((name) => {
      const path = rel ? `${rel}/${name}` : name;
      if (statSync(join(root, path)).isDirectory()) return rules.ignores(`${path}/`) ? [] : walk(path);
      return rules.ignores(path) ? [] : [path];
    });
  return walk('').sort();
}

/** True when .funcignore keeps `path` out of the package (a folder is written with a trailing "/"). */
export function excludedBy(funcignore: string, path: string): boolean {
  return ignore().add(funcignore).ignores(path);
}

export function copyFiles(files: readonly string[], from: string, to: string): void {
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(from, file), join(to, file));
  }
}

/**
 * What the package holds beyond what the remote build and the host need: the sources tsconfig.json
 * compiles, the manifest and lock file the install reads, host.json and .funcignore itself. Stated
 * from tsconfig's "include", not from a list of folders to leave out, so a new development folder
 * (a stand-in, a tool) that .funcignore forgets is reported whatever it is called.
 */
export function filesBeyondTheBuild(files: readonly string[], tsconfigInclude: readonly string[]): string[] {
  const compiled = ignore().add([...tsconfigInclude]);
  return files.filter((file) => !rootFilesTheBuildNeeds.includes(file) && !compiled.ignores(file));
}

export const rootFilesTheBuildNeeds = ['.funcignore', 'host.json', 'package.json', 'package-lock.json', 'tsconfig.json'];

export function tsconfigInclude(root: string): string[] {
  return (JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as { include: string[] }).include;
}

/**
 * A source file the functions cannot be compiled without: the first module the first function file
 * imports from the app's own sources (found, not named, so the check survives moves).
 */
export function neededSourceFile(files: readonly string[], root: string): { file: string; specifier: string } {
  const functionFile = files.find((file) => /^functions\/[^/]+\.ts$/.test(file));
  if (!functionFile) throw new Error('the package holds no functions/*.ts');
  const specifier = /from '(\.\.\/src\/[^']+)\.js'/.exec(readFileSync(join(root, functionFile), 'utf8'))?.[1];
  if (!specifier) throw new Error(`${functionFile} imports nothing from src/`);
  return { file: join(dirname(functionFile), `${specifier}.ts`), specifier: `${specifier}.js` };
}
