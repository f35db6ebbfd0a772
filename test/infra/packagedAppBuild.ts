import { spawn, spawnSync } from 'node:child_process';

export interface StepResult {
  readonly command: string;
  readonly exitCode: number;
  readonly output: string;
  readonly durationMs: number;
}

/** Runs a command to its end without blocking the test worker (an install takes a minute or two). */
export function runStep(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<StepResult> {
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        command: [command, ...args].join(' '),
        exitCode: code ?? -1,
        output: Buffer.concat(chunks).toString('utf8'),
        durationMs: performance.now() - startedAt,
      }),
    );
  });
}

/**
 * The environment of Azure's build: this machine's PATH, home and npm cache, none of the settings a
 * test run or an `npm test` adds (NODE_ENV=production, an npm_config_omit or the lifecycle's
 * variables would change what npm installs).
 */
export function buildEnvironment(): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(
    ([name]) => !/^(npm_|NODE_ENV$|NODE_OPTIONS$|VITEST|INIT_CWD$|TEST$)/i.test(name) || /^npm_config_(cache|registry)$/i.test(name),
  );
  return Object.fromEntries(kept);
}

/** Why npm cannot reach its registry, or undefined when it can (`npm ping`, ten seconds at most). */
export function registryUnreachable(): string | undefined {
  const ping = spawnSync('npm', ['ping', '--fetch-timeout=10000', '--fetch-retries=0'], { env: buildEnvironment(), encoding: 'utf8', timeout: 20_000 });
  if (ping.status === 0) return undefined;
  const lines = `${ping.stderr}`.split('\n');
  const reason = lines.find((line) => /FetchError/.test(line)) ?? lines.find((line) => /npm error code/.test(line));
  return (ping.error?.message ?? reason?.replace(/^npm error /, '') ?? `npm ping exited with ${ping.status}`).trim();
}

type Lock = { packages: Record<string, { version?: string }> };

/**
 * What an install took that the lock does not pin: Oryx runs `npm install`, which, unlike `npm ci`,
 * quietly re-resolves when package.json and the lock disagree, and Azure would then run dependencies
 * no test here ever ran. Compared by name and version, not by place in the tree: a workspace left out
 * of the package drops entries and may move others, and neither installs anything unpinned.
 */
export function lockDrift(before: Lock, after: Lock): string[] {
  const pinned = new Set(Object.entries(before.packages).map(([path, entry]) => `${packageName(path)}@${entry.version}`));
  return Object.entries(after.packages)
    .filter(([path]) => path.includes('node_modules/'))
    .map(([path, entry]) => `${packageName(path)}@${entry.version}`)
    .filter((installed) => !pinned.has(installed))
    .map((installed) => `${installed} is not pinned by the lock`);
}

const packageName = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
