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
 * earlier release parked it) and the one of the validated payload it keeps.
 */
export function fingerprintsOfParked(item: Pick<ParkedItemDocument, 'fingerprint' | 'messageType' | 'payload'>): readonly string[] {
  const ofPayload = fingerprintPayload(item.messageType, item.payload);
  return ofPayload === item.fingerprint ? [ofPayload] : [item.fingerprint, ofPayload];
}

/** Whether a message is the same request as a parked item. */
export function isSameAsParked(message: Pick<ParsedOrderMessage, 'fingerprint' | 'receivedFingerprint'>, item: Pick<ParkedItemDocument, 'fingerprint' | 'messageType' | 'payload'>): boolean {
  return fingerprintsOfParked(item).some((stored) => isSameRequest(message, stored));
}
