import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/configurationError.js';
import { loadSetupSettings } from '../../../src/config.js';
import { describeSeconds, exitCodeOf, formatCheckLine, secondsOfIsoDuration } from '../../../src/doctor/index.js';

describe('formatCheckLine and exitCodeOf', () => {
  it('prints ok with what was found, and the rest with what was expected and how to fix it', () => {
    expect(formatCheckLine({ status: 'ok', subject: "queue 'orders'", property: 'lock duration', expected: '60 s', found: '60 s' })).toBe(
      "ok      queue 'orders' lock duration: 60 s",
    );
    expect(
      formatCheckLine({ status: 'MISSING', subject: "container 'leases'", property: 'exists', expected: 'a container', found: 'nothing', fix: 'create it' }),
    ).toBe("MISSING container 'leases' exists: expected a container, found nothing (create it)");
  });

  it('exits 1 when anything is missing or wrong', () => {
    const ok = { status: 'ok' as const, subject: 's', property: 'p', expected: 'e', found: 'f' };
    expect(exitCodeOf([ok])).toBe(0);
    expect(exitCodeOf([ok, { ...ok, status: 'WRONG' }])).toBe(1);
    expect(exitCodeOf([{ ...ok, status: 'MISSING' }])).toBe(1);
  });
});

describe('secondsOfIsoDuration', () => {
  it('reads the durations Service Bus writes', () => {
    expect(secondsOfIsoDuration('PT1M')).toBe(60);
    expect(secondsOfIsoDuration('P14D')).toBe(1_209_600);
    expect(secondsOfIsoDuration('PT1M30.5S')).toBe(90.5);
    expect(secondsOfIsoDuration('P1DT2H')).toBe(93_600);
    expect(secondsOfIsoDuration('P10675199DT2H48M5.4775807S')).toBeCloseTo(10_675_199 * 86_400 + 2 * 3_600 + 48 * 60 + 5.4775807, 3);
  });

  it('refuses what is not one', () => {
    for (const text of ['P', 'PT', '60', 'one minute', 'P1W']) expect(secondsOfIsoDuration(text)).toBeUndefined();
  });

  it('describes seconds with whole days or hours', () => {
    expect([describeSeconds(60), describeSeconds(7200), describeSeconds(1_209_600)]).toEqual(['60 s', '7200 s (2 h)', '1209600 s (14 d)']);
  });
});

describe('loadSetupSettings', () => {
  it("takes the app's defaults and refuses a bad value by its name", () => {
    expect(loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders' })).toMatchObject({
      orderEventsTopicName: 'order-events',
      fulfilmentSubscriptionName: 'fulfilment',
      cosmos: { leasesContainerName: 'leases' },
      queue: { lockDurationSeconds: 60 },
    });
    expect(() => loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders', QUEUE_LOCK_DURATION_SECONDS: 'soon' })).toThrow(ConfigurationError);
    expect(() => loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders', QUEUE_LOCK_DURATION_SECONDS: 'soon' })).toThrow(/QUEUE_LOCK_DURATION_SECONDS/);
  });
});
