import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { registeredFunctions } from './functionsCore.js';
import type { RegisteredFunction } from './functionsCore.js';

/**
 * Loads a compiled Functions app the way the Node worker does: every file that package.json `main`
 * names (a path or a glob such as `dist/functions/*.js`) is required, and the registrations it
 * makes are captured. Settings must be in process.env first: the app reads them as it loads.
 */
export function loadFunctionApp(appRoot: string): RegisteredFunction[] {
  const main = (JSON.parse(readFileSync(join(appRoot, 'package.json'), 'utf8')) as { main?: string }).main;
  if (!main) throw new Error(`${appRoot}/package.json has no "main": the worker would find no functions`);
  const files = filesMatching(appRoot, main);
  if (files.length === 0) throw new Error(`package.json main "${main}" matches no file: run "npm run build" first`);
  const before = registeredFunctions().length;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the worker loads the app with require, and so do we
  for (const file of files) require(file);
  return registeredFunctions().slice(before);
}

// Enough of glob for the worker's patterns: "*" within one path segment, "**" followed by "/" across segments.
export function filesMatching(root: string, pattern: string): string[] {
  const regex = globToRegExp(pattern.replace(/^\.\//, ''));
  return walk(root)
    .map((file) => relative(root, file).split(sep).join('/'))
    .filter((file) => regex.test(file))
    .sort()
    .map((file) => join(root, file));
}

function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    if (pattern.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 2;
    } else if (pattern[i] === '*') {
      source += '[^/]*';
    } else {
      source += (pattern[i] ?? '').replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path) : [path];
  });
}
