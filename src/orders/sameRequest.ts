import { fingerprintPayload } from '../idempotency/index.js';
import type { ParkedItemDocument } from './parkedItems.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';
import type { PaymentReceived } from './schemas.js';

/**
 * Whether a fingerprint stored for a key names this message: the one over the body as received
 * (what every release so far stores) or the one over the validated payload (what the app acts on:
 * fields the schema ignores left out). A copy rebuilt from a stored payload, or a redelivery that
 * differs only in ignored fields, is the same request; a change to a field the app reads is not.
 */
export function isSameRequest(message: Pick<ParsedOrderMessage, 'fingerprint' | 'validatedFingerprint'>, stored: string | undefined): boolean {
  return stored !== undefined && (stored === message.fingerprint || stored === message.validatedFingerprint);
}

/**
 * The fingerprints a parked item answers to: the one it stored (over the body as received), the one
 * of the validated payload it keeps, and, when it kept the body as received (`receivedJson`), the
 * one over that body (the same as the stored one when this release parked it; kept for items a
 * release storing the validated form will write).
 */
export function fingerprintsOfParked(item: Pick<ParkedItemDocument, 'fingerprint' | 'messageType' | 'payload' | 'receivedJson'>): readonly string[] {
  const forms = [item.fingerprint, fingerprintPayload(item.messageType, item.payload)];
  const received = receivedBodyOf(item.receivedJson);
  if (received !== undefined) forms.push(fingerprintPayload(item.messageType, received));
  return [...new Set(forms)];
}

/** The body a parked item kept as JSON text; undefined when it kept none or the text is not JSON (then only the other forms count). */
function receivedBodyOf(receivedJson: string | undefined): unknown {
  if (receivedJson === undefined) return undefined;
  try {
    return JSON.parse(receivedJson) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether a message is the same request as a parked item. */
export function isSameAsParked(
  message: Pick<ParsedOrderMessage, 'fingerprint' | 'validatedFingerprint'>,
  item: Pick<ParkedItemDocument, 'fingerprint' | 'messageType' | 'payload' | 'receivedJson'>,
): boolean {
  return fingerprintsOfParked(item).some((stored) => isSameRequest(message, stored));
}

/**
 * The same payment under another key: the same order, amount and currency (the time it was received
 * may differ between copies). What a claim, an inbox marker or a parked item recorded of it counts.
 */
export function isSamePayment(payment: PaymentReceived, stored: Pick<PaymentReceived, 'orderId' | 'amount' | 'currency'> | undefined): boolean {
  return stored !== undefined && payment.orderId === stored.orderId && payment.amount === stored.amount && payment.currency === stored.currency;
}
