import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The azd environment's values (`azd env get-values`) when the tool runs inside an azd project: the
 * outputs of infra/main.bicep (SERVICEBUS_FULLY_QUALIFIED_NAMESPACE, COSMOS_ENDPOINT, ...) become the
 * tool's defaults. Only when `azd` is on PATH and `.azure/` exists in the working directory; any
 * failure (no environment selected, azd too old, a timeout) yields nothing: the tool never fails for it.
 */
export async function readAzdEnvironment(cwd: string, env: Readonly<Record<string, string | undefined>>, timeoutMs = 10_000): Promise<Record<string, string>> {
  const azd = existsSync(join(cwd, '.azure')) ? onPath('azd', env.PATH ?? '') : undefined;
  if (azd === undefined) return {};
  const output = await new Promise<string | undefined>((resolve) => {
    execFile(azd, ['env', 'get-values'], { cwd, timeout: timeoutMs, maxBuffer: 1024 * 1024, encoding: 'utf8' }, (error, stdout) =>
      resolve(error ? undefined : stdout),
    );
  });
  return output === undefined ? {} : parseAzdValues(output);
}

/** The command's file on PATH, or undefined. */
function onPath(command: string, path: string): string | undefined {
  const names = process.platform === 'win32' ? [`${command}.exe`, `${command}.cmd`] : [command];
  for (const dir of path.split(delimiter)) {
    for (const name of names) if (dir !== '' && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

const escapes: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t' };

/**
 * `azd env get-values` prints dotenv lines: `NAME="value"` with backslash escapes (azd quotes every
 * value), or unquoted / single-quoted values from older versions. Lines that are not an assignment
 * to a plain name are skipped; at most 1,000 are read.
 */
export function parseAzdValues(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/).slice(0, 1000)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!match) continue;
    const [, name, raw] = match as unknown as [string, string, string];
    const value = unquote(raw);
    if (value !== undefined) values[name] = value;
  }
  return values;
}

function unquote(raw: string): string | undefined {
  if (raw.startsWith('"')) {
    let value = '';
    for (let i = 1; i < raw.length; i++) {
      const c = raw[i] as string;
      if (c === '"') return i === raw.length - 1 ? value : undefined;
      if (c === '\\' && i + 1 < raw.length) {
        const next = raw[++i] as string;
        value += escapes[next] ?? next;
      } else value += c;
    }
    return undefined;
  }
  if (raw.startsWith("'")) return raw.length >= 2 && raw.endsWith("'") ? raw.slice(1, -1) : undefined;
  return raw.replace(/\s+#.*$/, '');
}
