import { z } from 'zod';
import { hasAtMostFourDecimals } from './money.js';

export const orderMessageTypes = ['OrderPlaced', 'PaymentReceived', 'OrderStatusChanged'] as const;
export type OrderMessageType = (typeof orderMessageTypes)[number];

export const orderStatuses = ['Accepted', 'Paid', 'Shipped', 'Delivered', 'Cancelled'] as const;
export type OrderStatus = (typeof orderStatuses)[number];

const isoCurrencies = new Set(Intl.supportedValuesOf('currency'));

/**
 * The order id is the partition key and the order document's id, so it must be a valid Cosmos id
 * as it is; it also may not contain `|`, `%` or `*`, which our derived ids reserve.
 */
export const orderIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^/\\?#|%*\p{Cc}]+$/u, 'must not contain / \\ ? # | % * or control characters')
  .refine((id) => id.trim() === id, 'must not start or end with white space');

const currency = z.string().refine((code) => isoCurrencies.has(code), 'must be an ISO 4217 currency code such as EUR');
const instant = z.iso.datetime({ offset: true });
const money = z.number().refine(hasAtMostFourDecimals, 'must have at most four decimal places');

/**
 * The bounds of every number a sender controls, shared by the HTTP intake and the consumer. They are
 * chosen so every sum stays exact in ten-thousandths (money.ts): the largest order, 100 lines of
 * 10,000 at 100,000, is 10^11, i.e. 10^15 ten-thousandths, below 2^53 (about 9.007 x 10^15).
 */
export const numberBounds = {
  maxLines: 100,
  maxQuantity: 10_000,
  maxUnitPrice: 100_000,
  maxPaymentAmount: 10_000_000,
  /** A version above this would leave no room to correct the status (Cosmos and .NET int32 readers too). */
  maxStatusVersion: 2 ** 31 - 1,
} as const;

export const orderLineSchema = z.object({
  sku: z.string().min(1).max(64),
  quantity: z.int().min(1, 'must be >= 1').max(numberBounds.maxQuantity, `must be at most ${numberBounds.maxQuantity}`),
  unitPrice: z.number().min(0, 'must be >= 0').max(numberBounds.maxUnitPrice, `must be at most ${numberBounds.maxUnitPrice}`).pipe(money),
});

export const orderPlacedSchema = z.object({
  orderId: orderIdSchema,
  customerId: z.string().min(1).max(128),
  currency,
  lines: z.array(orderLineSchema).min(1).max(numberBounds.maxLines),
  placedAt: instant,
});

export const paymentReceivedSchema = z.object({
  orderId: orderIdSchema,
  paymentId: z.string().min(1).max(128),
  amount: z.number().positive('must be > 0').max(numberBounds.maxPaymentAmount, `must be at most ${numberBounds.maxPaymentAmount}`).pipe(money),
  currency,
  receivedAt: instant,
});

export const orderStatusChangedSchema = z.object({
  orderId: orderIdSchema,
  status: z.enum(orderStatuses),
  version: z.int().min(1, 'must be >= 1').max(numberBounds.maxStatusVersion, `must be at most ${numberBounds.maxStatusVersion}`),
  changedAt: instant,
});

export type OrderLine = z.infer<typeof orderLineSchema>;
export type OrderPlaced = z.infer<typeof orderPlacedSchema>;
export type PaymentReceived = z.infer<typeof paymentReceivedSchema>;
export type OrderStatusChanged = z.infer<typeof orderStatusChangedSchema>;

export const schemaByType = {
  OrderPlaced: orderPlacedSchema,
  PaymentReceived: paymentReceivedSchema,
  OrderStatusChanged: orderStatusChangedSchema,
} as const;

/** `lines[2].quantity: must be > 0; currency: ...`: every problem, each with its field path. */
export function describeIssues(error: z.ZodError): string {
  return issuePaths(error)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
}

/** Each problem with its field path, for an HTTP client to show next to the field. */
export function issuePaths(error: z.ZodError): { readonly path: string; readonly message: string }[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(body)';
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)), '');
}
