import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The one line a chain process prints once it takes orders: where to POST them. */
export const readyLine = (url: string): string => `${JSON.stringify({ chain: 'ready', url })}\n`;

/**
 * One delivery as the receiving process saw it: which function, the order (the message's SessionId,
 * which both chains set to the order id), when the broker enqueued it, which delivery it was.
 */
export interface DeliveryLine {
  readonly fn: 'processOrder' | 'requestShipment';
  readonly orderId?: string;
  readonly enqueuedAt?: number;
  readonly deliveryCount: number;
  readonly failed: boolean;
}

export const deliveryLine = (delivery: DeliveryLine): string => `${JSON.stringify({ chain: 'delivery', ...delivery })}\n`;

/** One invocation of the app's outbox publisher: the change feed's page, the entries it sent, how long it took. */
export interface PublishLine {
  readonly documents: number;
  readonly entries: number;
  readonly ms: number;
}

export const publishLine = (publish: PublishLine): string => `${JSON.stringify({ chain: 'publish', ...publish })}\n`;

export type ReportedLine = ({ readonly chain: 'delivery' } & DeliveryLine) | ({ readonly chain: 'publish' } & PublishLine);

/** One chain (the app in the local Functions host, or the bare chain) in its own OS process. */
export interface ChainProcess {
  /** The base URL its POST /api/orders answers on. */
  readonly url: string;
  /** CPU time the process has used so far (user and system, ms), from /proc; undefined where there is none. */
  cpuMs(): number | undefined;
  stop(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat: 100 on every Linux build in use (USER_HZ). */
const ticksPerSecond = 100;

export function processCpuMs(pid: number | undefined): number | undefined {
  try {
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis): utime is the 12th, stime the 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / ticksPerSecond : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts `bench/<script>` with node and tsx as a loader (no wrapper process, so the stop below
 * reaches the process itself), with only PATH, HOME and the stack's settings in its environment, and
 * waits for its ready line. Its delivery and publish lines go to `onLine`; anything else it prints, to this process's stderr.
 */
export async function startChainProcess(
  script: string,
  settings: Readonly<Record<string, string>>,
  timeoutMs: number,
  onLine: (line: ReportedLine) => void,
): Promise<ChainProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(__dirname, script)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...settings },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not say it was ready within ${timeoutMs / 1000} s`)), timeoutMs);
    child.once('exit', (code) => reject(new Error(`${script} exited (${String(code)}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{"chain":"delivery"') || line.startsWith('{"chain":"publish"')) return onLine(JSON.parse(line) as ReportedLine);
      const ready = line.startsWith('{"chain":"ready"') ? (JSON.parse(line) as { url: string }) : undefined;
      if (!ready) return void process.stderr.write(`${line}\n`);
      clearTimeout(timer);
      resolve(ready.url);
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, cpuMs: () => processCpuMs(child.pid), stop };
}
