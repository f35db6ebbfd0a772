import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { processCpuMs } from './chainProcess.js';
import { commandLine } from './hostLines.js';
import type { HostCommand, HostReport } from './hostLines.js';

type Kind = HostReport['host'];
export type ReportOf<K extends Kind> = Extract<HostReport, { host: K }>;

/** One child of `npm run bench -- --host` (bench/hostProcess.ts), spoken to line by line. */
export interface HostChild {
  send(command: HostCommand): void;
  /** The next report of this kind (reports are taken in the order they came). */
  next<K extends Kind>(kind: K, timeoutMs: number): Promise<ReportOf<K>>;
  /** CPU time the process has used so far (user and system, ms), from /proc. */
  cpuMs(): number | undefined;
  /** Asks it to quit (so that its CPU profile is written) and waits for its exit. */
  quit(): Promise<void>;
}

/**
 * Starts `bench/hostProcess.ts <args>` with node and tsx as a loader (no wrapper process, so `--cpu-prof`
 * profiles the process itself), with only PATH, HOME and `settings` in its environment, and waits for its
 * ready report. What else it prints goes to this process's stderr.
 */
export async function startHostChild(
  args: readonly string[],
  settings: Readonly<Record<string, string>>,
  nodeOptions: readonly string[] = [],
): Promise<{ child: HostChild; ready: ReportOf<'ready'> }> {
  const proc = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', join(__dirname, 'hostProcess.ts'), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...settings },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const reports: HostReport[] = [];
  const waiting: (() => void)[] = [];
  let exited: string | undefined;
  const wake = () => waiting.splice(0).forEach((w) => w());
  createInterface({ input: proc.stdout }).on('line', (line) => {
    if (!line.startsWith('{"host":')) return void process.stderr.write(`${line}\n`);
    reports.push(JSON.parse(line) as HostReport);
    wake();
  });
  const exit = new Promise<void>((resolve) =>
    proc.once('exit', (code, signal) => {
      exited = `exited (${String(code ?? signal)})`;
      wake();
      resolve();
    }),
  );
  const next = async <K extends Kind>(kind: K, timeoutMs: number): Promise<ReportOf<K>> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = reports.findIndex((r) => r.host === kind);
      if (index >= 0) return reports.splice(index, 1)[0] as ReportOf<K>;
      if (exited) throw new Error(`host bench: ${args.join(' ')} ${exited} before reporting ${kind}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`host bench: ${args.join(' ')} did not report ${kind} within ${timeoutMs / 1000} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiting.push(() => (clearTimeout(timer), resolve()));
      });
    }
  };
  const child: HostChild = {
    send: (command) => void proc.stdin.write(commandLine(command)),
    next,
    cpuMs: () => processCpuMs(proc.pid),
    async quit() {
      if (exited) return;
      proc.stdin.write(commandLine({ cmd: 'quit' }));
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(timer);
    },
  };
  const ready = await next('ready', 120_000).catch(async (error: unknown) => {
    proc.kill('SIGKILL');
    throw error;
  });
  return { child, ready };
}
