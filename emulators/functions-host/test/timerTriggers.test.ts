import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { app } from '@azure/functions';
import type { Timer } from '@azure/functions';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { registeredFunctions } from '../functionsCore.js';
import type { RegisteredFunction } from '../functionsCore.js';
import { fileLease, processLocalLease } from '../listenerLease.js';
import { parseNcrontab, startTimerListener } from '../timerTriggers.js';
import type { TimerListener } from '../timerTriggers.js';

const calls: { name: string; timer: Timer; at: string }[] = [];
const gates = new Map<string, () => Promise<void>>();

/** Registers a timer function through @azure/functions, as an app file would. */
function timerFunction(name: string, schedule: string, runOnStartup = false): RegisteredFunction {
  app.timer(name, {
    schedule,
    runOnStartup,
    handler: async (timer: Timer) => {
      calls.push({ name, timer, at: new Date().toISOString() });
      await gates.get(name)?.();
    },
  });
  const fn = [...registeredFunctions()].reverse().find((f) => f.metadata.name === name);
  if (!fn) throw new Error(`${name} was not registered`);
  return fn;
}

const bindingOf = (fn: RegisteredFunction) => Object.values(fn.metadata.bindings).find((b) => b.type === 'timerTrigger') ?? {};
const listeners: TimerListener[] = [];
const start = (fn: RegisteredFunction, settings: Record<string, string> = {}, lease = processLocalLease) => {
  const listener = startTimerListener(fn, bindingOf(fn), { settings, lease });
  listeners.push(listener);
  return listener;
};

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-12-01T10:00:00.500Z'), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  calls.length = 0;
  gates.clear();
});

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(listeners.splice(0).map((l) => l.close()));
});

describe('NCRONTAB schedules, as the Functions host reads them', () => {
  it('needs six fields and names the function, the expression and an example when it gets five', () => {
    expect(() => parseNcrontab('*/5 * * * *', 'sweep')).toThrow(
      'sweep: schedule "*/5 * * * *" has 5 fields; NCRONTAB needs six ({second} {minute} {hour} {day} {month} {day-of-week}), e.g. "0 */5 * * * *"',
    );
    expect(() => parseNcrontab('0 */5 * * * banana', 'sweep')).toThrow(/^sweep: schedule "0 \*\/5 \* \* \* banana" is not a valid NCRONTAB expression/);
    expect(parseNcrontab('0 */5 * * * *', 'sweep').nextRun(new Date('2026-12-01T10:02:07Z'))?.toISOString()).toBe('2026-12-01T10:05:00.000Z');
  });

  it('resolves %SETTING% in the schedule from app settings, and refuses to start when the setting is missing', () => {
    const fn = timerFunction('fromSetting', '%MY_SCHEDULE%');
    expect(start(fn, { MY_SCHEDULE: '*/10 * * * * *' }).schedule).toBe('*/10 * * * * *');
    expect(() => start(fn, {})).toThrow('binding expression %MY_SCHEDULE% names an app setting that is not set');
  });
});

describe('a timer listener', () => {
  it('fires on each occurrence with the timer the host passes (schedule status, not past due)', async () => {
    start(timerFunction('everySecond', '* * * * * *'));
    await vi.advanceTimersByTimeAsync(600);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.timer).toMatchObject({ isPastDue: false, schedule: { adjustForDST: true }, scheduleStatus: { next: '2026-12-01T10:00:02.000Z' } });
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls.map((c) => c.at)).toEqual(['2026-12-01T10:00:01.000Z', '2026-12-01T10:00:02.000Z', '2026-12-01T10:00:03.000Z']);
  });

  it('runs at start-up only with runOnStartup', async () => {
    start(timerFunction('onStartup', '0 0 * * * *', true));
    start(timerFunction('notOnStartup', '0 0 * * * *', false));
    await vi.advanceTimersByTimeAsync(10);
    expect(calls.map((c) => c.name)).toEqual(['onStartup']);
  });

  it('never overlaps invocations: an occurrence missed while one ran runs after it, as past due', async () => {
    let release!: () => void;
    gates.set('slow', () => new Promise<void>((resolve) => (release = resolve)));
    const listener = start(timerFunction('slow', '* * * * * *'));
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toHaveLength(1);
    gates.delete('slow');
    release();
    await listener.idle();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.timer.isPastDue).toBe(true);
  });
});

describe('the listener lease shared by local hosts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'timer-lease-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets one host hold it while it lives, and another take it once it has expired or been released', async () => {
    let nowMs = 1_000_000;
    const path = join(dir, 'sweep.listener.lease');
    const a = fileLease(path, 60_000, () => nowMs);
    const b = fileLease(path, 60_000, () => nowMs);
    expect(await a.holds()).toBe(true);
    expect(await b.holds()).toBe(false);
    expect(await a.holds()).toBe(true);
    nowMs += 61_000;
    expect(await b.holds()).toBe(true);
    expect(await a.holds()).toBe(false);
    await b.release();
    expect(await a.holds()).toBe(true);
  });

  it('is taken over from a host whose process is gone, however long its lease had left', async () => {
    const path = join(dir, 'dead.listener.lease');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, JSON.stringify({ owner: 'dead-host', pid: 2 ** 22 + 12345, expiresAtMs: Date.now() + 3_600_000 }));
    expect(await fileLease(path).holds()).toBe(true);
  });

  it('makes two hosts with the same lease directory run one timer once per occurrence', async () => {
    const fn = timerFunction('shared', '* * * * * *');
    start(fn, {}, fileLease(join(dir, 'shared.listener.lease')));
    start(fn, {}, fileLease(join(dir, 'shared.listener.lease')));
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls.map((c) => c.at)).toEqual(['2026-12-01T10:00:01.000Z', '2026-12-01T10:00:02.000Z', '2026-12-01T10:00:03.000Z']);
  });
});
