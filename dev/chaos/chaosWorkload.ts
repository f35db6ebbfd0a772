import type { ServiceBusMessage } from '@azure/service-bus';

/** What the store must hold for one order once everything sent has been consumed. */
export interface ExpectedOrder {
  readonly amountPaid: number;
  readonly paymentCount: number;
  readonly status: string;
  readonly statusVersion: number;
}

/** Why a message must end in the dead-letter queue, and with which recorded reason. */
export interface ExpectedRejection {
  readonly messageId: string;
  readonly reason: 'PayloadConflict' | 'InvalidJson' | 'BodyTooDeep' | 'InvalidIdempotencyKey' | 'InvalidCloudEvent';
}

export interface ChaosWorkload {
  /** First wave: in send order, producer re-sends included. */
  readonly sends: ServiceBusMessage[];
  /** Sent once the first wave is consumed: conflicts need their original stored first. */
  readonly conflicts: ServiceBusMessage[];
  readonly expected: Map<string, ExpectedOrder>;
  readonly rejections: ExpectedRejection[];
  readonly counts: {
    readonly orders: number;
    readonly reversed: number;
    readonly resendsSameId: number;
    readonly resendsNewId: number;
    readonly hostile: number;
  };
}

export interface ChaosWorkloadOptions {
  readonly messages: number;
  /** Share of orders whose payments and status changes are sent before the order itself. */
  readonly reversedShare: number;
  readonly seed: number;
  readonly run: string;
}

const statuses = ['Paid', 'Shipped', 'Delivered'] as const;

/**
 * Orders, each with two payments and three status changes (some out of version order); a share sent
 * in reverse (payments and status changes before their order); producer re-sends with the same
 * MessageId and with a new MessageId and the same `idempotency-key`; one conflict of every message
 * type; hostile bodies. About `messages` sends in all; the expected end state follows from them.
 */
export function chaosWorkload(options: ChaosWorkloadOptions): ChaosWorkload {
  const random = seededRandom(options.seed);
  const orders = Math.max(3, Math.round(options.messages / 6.6));
  const sends: ServiceBusMessage[] = [];
  const expected = new Map<string, ExpectedOrder>();
  let reversed = 0;
  let resendsSameId = 0;
  let resendsNewId = 0;
  const at = '2026-12-01T10:00:00Z';
  for (let i = 0; i < orders; i += 1) {
    const orderId = `chaos-${options.run}-${String(i).padStart(5, '0')}`;
    const placed: ServiceBusMessage = {
      messageId: `placed-${orderId}`,
      subject: 'OrderPlaced',
      body: { orderId, customerId: `c-${i % 17}`, currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 1 + (i % 3), unitPrice: 12.5 }], placedAt: at },
    };
    const payments = [10, 2.5].map((amount, p): ServiceBusMessage => ({
      messageId: `pay-${orderId}-${p}`,
      subject: 'PaymentReceived',
      body: { orderId, paymentId: `p-${orderId}-${p}`, amount, currency: 'EUR', receivedAt: at },
    }));
    const versions = random() < 0.3 ? [3, 1, 2] : [1, 2, 3];
    const changes = versions.map((v): ServiceBusMessage => ({
      messageId: `status-${orderId}-${v}`,
      subject: 'OrderStatusChanged',
      body: { orderId, status: statuses[v - 1], version: v, changedAt: at },
    }));
    const isReversed = random() < options.reversedShare;
    if (isReversed) reversed += 1;
    const group = isReversed ? [...payments, ...changes, placed] : [placed, ...payments, ...changes];
    for (const message of group) {
      sends.push(message);
      const roll = random();
      if (roll < 0.08) {
        sends.push(message); // a producer retry inside the duplicate-detection window: the broker drops it
        resendsSameId += 1;
      } else if (roll < 0.14) {
        sends.push({ ...message, messageId: `${String(message.messageId)}-resent`, applicationProperties: { 'idempotency-key': String(message.messageId) } });
        resendsNewId += 1;
      }
    }
    expected.set(orderId, { amountPaid: 12.5, paymentCount: 2, status: 'Delivered', statusVersion: 3 });
  }
  const victim = `chaos-${options.run}-00000`;
  const conflicts: ServiceBusMessage[] = [
    {
      messageId: `placed-${victim}-edited`,
      subject: 'OrderPlaced',
      body: { orderId: victim, customerId: 'someone-else', currency: 'EUR', lines: [{ sku: 'SKU-X', quantity: 9, unitPrice: 1 }], placedAt: at },
    },
    {
      messageId: `pay-${victim}-0-edited`,
      subject: 'PaymentReceived',
      applicationProperties: { 'idempotency-key': `pay-${victim}-0` },
      body: { orderId: victim, paymentId: `p-${victim}-0`, amount: 99, currency: 'EUR', receivedAt: at },
    },
    { messageId: `status-${victim}-3-edited`, subject: 'OrderStatusChanged', body: { orderId: victim, status: 'Cancelled', version: 3, changedAt: at } },
  ];
  const hostile: [ServiceBusMessage, ExpectedRejection['reason']][] = [
    [{ messageId: `hostile-${options.run}-json`, subject: 'OrderPlaced', body: '{"orderId": ' }, 'InvalidJson'],
    [{ messageId: `hostile-${options.run}-deep`, subject: 'OrderPlaced', body: `${'['.repeat(50_000)}${']'.repeat(50_000)}` }, 'BodyTooDeep'],
    [
      {
        messageId: `hostile-${options.run}-key`,
        subject: 'OrderPlaced',
        applicationProperties: { 'idempotency-key': '   ' },
        body: { orderId: `chaos-${options.run}-hostile`, customerId: 'c', currency: 'EUR', lines: [{ sku: 'S', quantity: 1, unitPrice: 1 }], placedAt: at },
      },
      'InvalidIdempotencyKey',
    ],
    [
      {
        messageId: `hostile-${options.run}-ce`,
        subject: 'OrderPlaced',
        applicationProperties: { 'cloudEvents:id': 'e-1' },
        body: { orderId: `chaos-${options.run}-hostile-ce`, customerId: 'c', currency: 'EUR', lines: [{ sku: 'S', quantity: 1, unitPrice: 1 }], placedAt: at },
      },
      'InvalidCloudEvent',
    ],
  ];
  // Spread the hostile ones through the first wave.
  hostile.forEach(([message], n) => sends.splice(Math.floor(((n + 1) * sends.length) / (hostile.length + 1)), 0, message));
  const rejections: ExpectedRejection[] = [
    ...conflicts.map((m) => ({ messageId: String(m.messageId), reason: 'PayloadConflict' as const })),
    ...hostile.map(([m, reason]) => ({ messageId: String(m.messageId), reason })),
  ];
  return { sends, conflicts, expected, rejections, counts: { orders, reversed, resendsSameId, resendsNewId, hostile: hostile.length } };
}

/** mulberry32: the same seed, the same run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
