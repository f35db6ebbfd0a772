import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The Functions host runs a timer trigger as a singleton: one instance holds the function's
 * listener lease (a blob lease in AzureWebJobsStorage) and only it fires. Local hosts share a lease
 * file instead, so `npm run chaos`'s consumer processes run the sweeper one at a time too.
 */
export interface ListenerLease {
  /** Takes or renews the lease; false while another live host holds it. */
  holds(): Promise<boolean>;
  release(): Promise<void>;
}

interface LeaseRecord {
  readonly owner: string;
  readonly pid: number;
  readonly expiresAtMs: number;
}

export const processLocalLease: ListenerLease = { holds: async () => true, release: async () => {} };

/**
 * A lease file: created exclusively (`wx`), renewed by its owner, taken over once it has expired or
 * its process is gone (a SIGKILLed host never releases). Two hosts taking over at once both unlink
 * and both try `wx`: one wins.
 */
export function fileLease(path: string, ttlMs = 5 * 60_000, now: () => number = Date.now): ListenerLease {
  const owner = randomUUID();
  mkdirSync(dirname(path), { recursive: true });
  const write = (flag: 'wx' | 'w') =>
    writeFileSync(path, JSON.stringify({ owner, pid: process.pid, expiresAtMs: now() + ttlMs } satisfies LeaseRecord), { flag });
  const tryCreate = () => {
    try {
      write('wx');
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  };
  return {
    async holds() {
      if (tryCreate()) return true;
      const current = readRecord(path);
      if (current?.owner === owner) {
        write('w');
        return true;
      }
      if (current && current.expiresAtMs > now() && processAlive(current.pid)) return false;
      try {
        unlinkSync(path);
      } catch {
        // Another host took it over first: its `wx` decides.
      }
      return tryCreate();
    },
    async release() {
      if (readRecord(path)?.owner !== owner) return;
      try {
        unlinkSync(path);
      } catch {
        // Already gone.
      }
    },
  };
}

function readRecord(path: string): LeaseRecord | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LeaseRecord;
  } catch {
    // Absent, or half-written by a host that died mid-write: treat as free.
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
