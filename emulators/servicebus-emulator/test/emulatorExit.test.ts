import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the Service Bus emulator, closed', () => {
  // rhea learns of a dead socket only through 'error' or 'end': a broker that destroyed its sockets
  // silently left heartbeat timers behind, and `npm run local` never exited after its summary.
  it('lets the process exit although a client is still connected', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'emulators/servicebus-emulator/test/emulatorExitProbe.ts'], {
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect({ signal: run.signal, stdout: run.stdout.trim() }).toEqual({ signal: null, stdout: 'closed' });
  }, 30_000);
});
