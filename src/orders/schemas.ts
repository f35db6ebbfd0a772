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

export const orderLineSchema = z.object({
  sku: z.string().min(1).max(64),
  quantity: z.int().positive(),
  unitPrice: money.refine((v) => v >= 0, 'must be >= 0'),
});

export const orderPlacedSchema = z.object({
  orderId: orderIdSchema,
  customerId: z.string().min(1).max(128),
  currency,
  lines: z.array(orderLineSchema).min(1).max(100),
  placedAt: instant,
});

export const paymentReceivedSchema = z.object({
  orderId: orderIdSchema,
  paymentId: z.string().min(1).max(128),
  amount: money.refine((v) => v > 0, 'must be > 0'),
  currency,
  receivedAt: instant,
});

export const orderStatusChangedSchema = z.object({
  orderId: orderIdSchema,
  status: z.enum(orderStatuses),
  version: z.int().positive(),
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
  return issuePaths(error).map((issue) => `${issue.path}: ${issue.message}`).join('; ');
}

/** Each problem with its field path, for an HTTP client to show next to the field. */
export function issuePaths(error: z.ZodError): { readonly path: string; readonly message: string }[] {
  return error.issues.map((issue) => ({ path: formatPath(issue.path), message: issue.message }));
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(body)';
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${String(part)}` : String(part)), '');
}
