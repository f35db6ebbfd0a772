import { fingerprintPayload } from '../idempotency/index.js';
import type { ParkedItemDocument } from './parkedItems.js';
import type { ParsedOrderMessage } from './parseOrderMessage.js';

/**
 * Whether a fingerprint stored for a key names this message. Fingerprints are taken over the
 * validated payload (what the app acts on); releases before that took them over the body as
 * received, so a message whose body carries fields the schema ignores matches either form. Old and
 * new instances run side by side during a deploy and markers live for weeks: both forms are read.
 */
export function isSameRequest(message: Pick<ParsedOrderMessage, 'fingerprint' | 'receivedFingerprint'>, stored: string | undefined): boolean {
  return stored !== undefined && (stored === message.fingerprint || stored === message.receivedFingerprint);
}

/**
 * The fingerprints a parked item answers to: the one it stored (over the body as received, if an
 * earlier release parked it), the one of the validated payload it keeps, and, when it kept the body
 * as received (`receivedJson`), the one over that body: the form the previous release stored on a
 * marker or an order when it applied a copy of the same message during a deploy.
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
export function isSameAsParked(message: Pick<ParsedOrderMessage, 'fingerprint' | 'receivedFingerprint'>, item: Pick<ParkedItemDocument, 'fingerprint' | 'messageType' | 'payload' | 'receivedJson'>): boolean {
  return fingerprintsOfParked(item).some((stored) => isSameRequest(message, stored));
}
