import { describe, expect, it } from 'vitest';
import { loadSetupSettings } from '../../../src/config.js';
import { checkOrderEventsTopic, checkOrdersQueue, checkSubscription, expectedSubscriptions } from '../../../src/doctor/index.js';
import type { CheckResult, FoundQueue, FoundRule } from '../../../src/doctor/index.js';

const settings = loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders' });
// The queue of infra/servicebus-queues.json, as the administration API describes it.
const rightQueue: FoundQueue = {
  lockDuration: 'PT1M',
  maxDeliveryCount: 10,
  defaultMessageTimeToLive: 'P14D',
  requiresDuplicateDetection: true,
  duplicateDetectionHistoryTimeWindow: 'PT10M',
  deadLetteringOnMessageExpiration: true,
  requiresSession: false,
};
const notOk = (results: CheckResult[]) => results.filter((r) => r.status !== 'ok');

describe('checkOrdersQueue', () => {
  it('passes the queue the template creates, with the default settings', () => {
    const results = checkOrdersQueue(settings, rightQueue);
    expect(notOk(results)).toEqual([]);
    expect(results.map((r) => r.property)).toEqual([
      'duplicate detection',
      'sessions',
      'dead-lettering on expiration',
      'lock duration',
      'max delivery count',
      'message time-to-live',
      'marker retention (INBOX_MARKER_TTL_SECONDS) against its real properties',
    ]);
  });

  it('names a missing queue and nothing else', () => {
    expect(checkOrdersQueue(settings, undefined)).toMatchObject([{ status: 'MISSING', subject: "queue 'orders'", property: 'exists' }]);
  });

  it('says duplicate detection is off and that it can only be switched on at creation', () => {
    const [wrong, ...others] = notOk(checkOrdersQueue(settings, { ...rightQueue, requiresDuplicateDetection: false }));
    expect(others).toEqual([]);
    expect(wrong).toMatchObject({ status: 'WRONG', property: 'duplicate detection', expected: 'on', found: 'off' });
    expect(wrong?.fix).toContain('can only be enabled when the entity is created');
  });

  it('says a lock duration that is not the one QUEUE_LOCK_DURATION_SECONDS mirrors, and how to set it', () => {
    const [wrong, ...others] = notOk(checkOrdersQueue(settings, { ...rightQueue, lockDuration: 'PT30S' }));
    expect(others).toEqual([]);
    expect(wrong).toMatchObject({ property: 'lock duration', expected: '60 s (QUEUE_LOCK_DURATION_SECONDS)', found: '30 s' });
    expect(wrong?.fix).toContain('set QUEUE_LOCK_DURATION_SECONDS=30');
  });

  it('runs the retention rule on the queue as it is: a longer lock the settings mirror can still break it', () => {
    // Worked out by hand: 300 deliveries x (300 s renewing + 300 s lock) = 180,000 s, + 14 d + 1 d + 14 d
    // (2,505,600 s) = 2,685,600 s, over the default 30 d (2,592,000 s).
    const mirrored = loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders', QUEUE_MAX_DELIVERY_COUNT: '300', QUEUE_LOCK_DURATION_SECONDS: '300' });
    const [wrong, ...others] = notOk(checkOrdersQueue(mirrored, { ...rightQueue, maxDeliveryCount: 300, lockDuration: 'PT5M' }));
    expect(others).toEqual([]);
    expect(wrong).toMatchObject({
      property: 'marker retention (INBOX_MARKER_TTL_SECONDS) against its real properties',
      expected: 'at least 2685600 s (746 h)',
      found: '2592000 s (30 d)',
    });
    expect(wrong?.fix).toContain('maxDeliveryCount 300 x (lock renewal 300 s + lockDuration 300 s)');
  });

  it('reports a session-enabled queue, a delivery count and a time-to-live that differ from their settings, and dead-lettering off', () => {
    const results = notOk(
      checkOrdersQueue(settings, {
        ...rightQueue,
        requiresSession: true,
        maxDeliveryCount: 5,
        defaultMessageTimeToLive: 'P7D',
        deadLetteringOnMessageExpiration: false,
      }),
    );
    expect(results.map((r) => [r.property, r.found])).toEqual([
      ['sessions', 'on'],
      ['dead-lettering on expiration', 'off'],
      ['max delivery count', '5'],
      ['message time-to-live', '604800 s (7 d)'],
    ]);
  });

  it('shows a duration it cannot read as it came, and does not compute the retention rule with it', () => {
    const results = notOk(checkOrdersQueue(settings, { ...rightQueue, lockDuration: 'one minute' }));
    expect(results.map((r) => [r.property, r.found])).toEqual([
      ['lock duration', 'one minute'],
      ['marker retention (INBOX_MARKER_TTL_SECONDS) against its real properties', 'durations it cannot read'],
    ]);
  });
});

describe('checkOrderEventsTopic', () => {
  it('wants duplicate detection on, and names a missing topic', () => {
    expect(checkOrderEventsTopic(settings, { requiresDuplicateDetection: true, duplicateDetectionHistoryTimeWindow: 'PT10M' })).toMatchObject([
      { status: 'ok', found: 'on (window 600 s)' },
    ]);
    expect(checkOrderEventsTopic(settings, { requiresDuplicateDetection: false, duplicateDetectionHistoryTimeWindow: 'PT10M' })).toMatchObject([
      { status: 'WRONG', property: 'duplicate detection' },
    ]);
    expect(checkOrderEventsTopic(settings, undefined)).toMatchObject([{ status: 'MISSING', subject: "topic 'order-events'" }]);
  });
});

describe('checkSubscription', () => {
  const [fulfilment, audit] = expectedSubscriptions(settings);
  const found = { deadLetteringOnMessageExpiration: true, requiresSession: false };
  const fulfilmentRules: FoundRule[] = [
    { name: 'order-accepted', filter: { sqlExpression: "sys.Label = 'OrderAccepted' AND sys.To IS NULL" } },
    { name: 'retries', filter: { correlationId: undefined, to: 'fulfilment', subject: undefined, applicationProperties: undefined } },
  ];

  it('passes the subscriptions the template creates, with a $Default that matches nothing', () => {
    expect(notOk(checkSubscription('order-events', fulfilment!, found, [...fulfilmentRules, { name: '$Default', filter: { sqlExpression: '1=0' } }]))).toEqual(
      [],
    );
    expect(
      notOk(checkSubscription('order-events', audit!, { ...found, requiresSession: true }, [{ name: 'events', filter: { sqlExpression: 'sys.To  IS NULL' } }])),
    ).toEqual([]);
  });

  it("names Azure's $Default rule, which would deliver every event", () => {
    const [wrong, ...others] = notOk(
      checkSubscription('order-events', fulfilment!, found, [...fulfilmentRules, { name: '$Default', filter: { sqlExpression: '1=1' } }]),
    );
    expect(others).toEqual([]);
    expect(wrong).toMatchObject({ status: 'WRONG', property: "rule '$Default'", found: 'SQL filter "1=1"' });
  });

  it('names a missing rule and a rule with another filter', () => {
    const results = notOk(checkSubscription('order-events', fulfilment!, found, [{ name: 'retries', filter: { to: 'audit' } }]));
    expect(results).toMatchObject([
      { status: 'MISSING', property: "rule 'order-accepted'" },
      { status: 'WRONG', property: "rule 'retries'", expected: 'correlation filter {"to":"fulfilment"}', found: 'correlation filter {"to":"audit"}' },
    ]);
  });

  it('wants sessions on the audit subscription and off on fulfilment', () => {
    expect(notOk(checkSubscription('order-events', audit!, found, [{ name: 'events', filter: { sqlExpression: 'sys.To IS NULL' } }]))).toMatchObject([
      { property: 'sessions', expected: 'on', found: 'off' },
    ]);
    expect(notOk(checkSubscription('order-events', fulfilment!, { ...found, requiresSession: true }, fulfilmentRules))).toMatchObject([
      { property: 'sessions', expected: 'off', found: 'on' },
    ]);
  });

  it('addresses the retries rule to the subscription the settings name', () => {
    const [renamed] = expectedSubscriptions(loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders', FULFILMENT_SUBSCRIPTION_NAME: 'shipping' }));
    expect(renamed).toMatchObject({ name: 'shipping', rules: [{ name: 'order-accepted' }, { name: 'retries', correlation: { to: 'shipping' } }] });
  });
});
