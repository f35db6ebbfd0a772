import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRule, startServiceBusEmulator } from '../index.js';
import type { ServiceBusEmulator } from '../index.js';
import { commandAvailable } from '../../../test/support/commands.js';

const run = promisify(execFile);

const suites = commandAvailable('dotnet', '--version') ? [{ client: 'Azure.Messaging.ServiceBus 7.21.0' }] : [];
if (suites.length === 0) console.log('.NET Service Bus client check: skipped because the dotnet CLI is not installed');

// The Functions host receives and settles with the .NET client, so the emulator must satisfy it too.
describe.runIf(suites.length > 0)(`the emulator with the .NET client (${suites[0]?.client ?? 'not installed'})`, () => {
  let emulator: ServiceBusEmulator;
  let checkDll: string;

  beforeAll(async () => {
    const out = mkdtempSync(join(tmpdir(), 'sb-dotnet-check-'));
    await run('dotnet', ['build', 'dev/dotnet-check', '-c', 'Release', '-o', out, '--nologo', '-v', 'q'], { timeout: 240_000 });
    checkDll = join(out, 'ServiceBusEmulatorCheck.dll');
    emulator = await startServiceBusEmulator({
      port: 0,
      queues: {
        dotnet: {
          lockDurationMs: 30_000,
          maxDeliveryCount: 5,
          defaultMessageTimeToLiveMs: 3_600_000,
          duplicateDetectionWindowMs: 0,
          deadLetteringOnMessageExpiration: false,
        },
        'dotnet-sessions': {
          lockDurationMs: 30_000,
          maxDeliveryCount: 5,
          defaultMessageTimeToLiveMs: 3_600_000,
          duplicateDetectionWindowMs: 0,
          deadLetteringOnMessageExpiration: false,
          requiresSession: true,
        },
      },
      topics: {
        'dotnet-events': {
          settings: { defaultMessageTimeToLiveMs: 3_600_000, duplicateDetectionWindowMs: 60_000 },
          subscriptions: {
            fulfilment: {
              settings: {
                lockDurationMs: 30_000,
                maxDeliveryCount: 5,
                defaultMessageTimeToLiveMs: 3_600_000,
                duplicateDetectionWindowMs: 0,
                deadLetteringOnMessageExpiration: false,
              },
              rules: [defaultRule],
            },
          },
        },
      },
    });
  }, 300_000);
  afterAll(() => emulator?.close());

  it('sends, receives, abandons, dead-letters with a reason, peeks, renews, completes and auto-completes, on a queue, a topic subscription and a session', async () => {
    const { stdout } = await run('dotnet', [checkDll, emulator.connectionString, 'dotnet', 'dotnet-events', 'fulfilment', 'dotnet-sessions'], {
      timeout: 120_000,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }));
    console.log(stdout.trim());
    expect(stdout).not.toContain('FAIL');
    expect(stdout).toContain('PASS receive: DeliveryCount=1'); // .NET counts the first delivery as 1, as the host reports it
    expect(stdout).toContain('PASS subscription-processor: processed dotnet-topic-2 from the subscription, auto-completed');
    expect(stdout).toContain('PASS session: accepted order-7, received its three messages in order');
    expect(stdout).toContain('PASS session-state-and-renewal: renewed the session lock, set and read its state, 8 management requests in flight together');
    expect(stdout).toContain('PASS session-processor: a session processor accepted the next session and processed order-8/dotnet-session-next');
    expect(stdout).toContain('all 12 steps passed');
  }, 180_000);
});
