import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The Bicep CLI restored from NuGet (tools/bicep/restore.sh), or undefined when it cannot be restored here. */
export function bicepCli(): string | undefined {
  try {
    return execFileSync('bash', ['tools/bicep/restore.sh'], { encoding: 'utf8', timeout: 240_000 }).trim();
  } catch {
    return undefined;
  }
}

/** Builds a Bicep file to ARM JSON: the exit status, what the build said on stderr, and the template. */
export function buildTemplate(cli: string, path: string): { status: number | null; diagnostics: string; compiled: string } {
  const out = join(mkdtempSync(join(tmpdir(), 'bicep-')), 'main.json');
  const build = spawnSync(cli, ['build', path, '--outfile', out], { encoding: 'utf8' });
  return { status: build.status, diagnostics: build.stderr.trim(), compiled: build.status === 0 ? readFileSync(out, 'utf8') : '' };
}
