import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
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

/** One chain (the app in the local Functions host, or the bare chain) in its own OS process. */
export interface ChainProcess {
  /** The base URL its POST /api/orders answers on. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts `bench/chain/<script>` with node and tsx as a loader (no wrapper process, so the stop below
 * reaches the process itself), with only PATH, HOME and the stack's settings in its environment, and
 * waits for its ready line. Its delivery lines go to `onDelivery`; anything else it prints, to this process's stderr.
 */
export async function startChainProcess(script: string, settings: Readonly<Record<string, string>>, timeoutMs: number, onDelivery: (delivery: DeliveryLine) => void): Promise<ChainProcess> {
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
      if (line.startsWith('{"chain":"delivery"')) return onDelivery(JSON.parse(line) as DeliveryLine);
      const ready = line.startsWith('{"chain":"ready"') ? (JSON.parse(line) as { url: string }) : undefined;
      if (!ready) return void process.stderr.write(`${line}\n`);
      clearTimeout(timer);
      resolve(ready.url);
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, stop };
}
