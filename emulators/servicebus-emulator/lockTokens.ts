import { randomUUID } from 'node:crypto';

/**
 * Lock tokens travel as 16-byte AMQP delivery tags in .NET GUID byte order: the SDKs swap the first
 * three groups to read them as a UUID string, and send `string_to_uuid(lockToken)` back in
 * management requests. The swap is its own inverse.
 */
export function newLockToken(): string {
  return randomUUID();
}

export function deliveryTagFor(lockToken: string): Buffer {
  return guidByteSwap(uuidBytes(lockToken));
}

export function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

export function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function guidByteSwap(b: Buffer): Buffer {
  return Buffer.from([b[3]!, b[2]!, b[1]!, b[0]!, b[5]!, b[4]!, b[7]!, b[6]!, ...b.subarray(8)]);
}
