import { describe, expect, it } from 'vitest';
import { rememberedForm, textHeldBy } from '../../../src/consumer/rememberedForm.js';
import type { ConsumeResult } from '../../../src/consumer/index.js';
import { PermanentMessageError } from '../../../src/idempotency/index.js';

// What the memory of rejected deliveries keeps of each (rejectedDeliveries.ts), and what it counts
// against its budget of characters.
const rejected = (description: string): ConsumeResult => ({
  outcome: { kind: 'invalid', error: new PermanentMessageError('SchemaViolation', description, 'key-1') },
  dedupKey: 'key-1',
  type: 'OrderPlaced',
  orderId: 'o-1',
});

describe('the remembered form of a rejection', () => {
  it('keeps a reason of 500 characters whole, with its code, and no key in its message', () => {
    const description = 'r'.repeat(500);
    const kept = rememberedForm(rejected(description), new PermanentMessageError('SchemaViolation', description, 'key-1'));
    expect(kept.outcome).toMatchObject({ kind: 'invalid', error: { code: 'SchemaViolation', description } });
    expect(kept.outcome.kind === 'invalid' && kept.outcome.error.dedupKey).toBeUndefined();
    expect({ dedupKey: kept.dedupKey, type: kept.type, orderId: kept.orderId }).toEqual({ dedupKey: 'key-1', type: 'OrderPlaced', orderId: 'o-1' });
  });

  it('cuts a reason of 501 characters to 500, saying where the whole of it is', () => {
    const description = 'r'.repeat(501);
    const kept = rememberedForm(rejected(description), new PermanentMessageError('SchemaViolation', description));
    expect(kept.outcome.kind === 'invalid' && kept.outcome.error.description).toBe(`${'r'.repeat(500)}… (cut; the rejection record holds the whole reason)`);
  });
});

describe('the characters a remembered result holds', () => {
  it('counts the reason, the error message, the key, the type and the order id, each once', () => {
    const result = rejected('abc');
    const error = result.outcome.kind === 'invalid' ? result.outcome.error : undefined;
    expect(textHeldBy(result)).toBe(3 + error!.message.length + 'key-1'.length + 'OrderPlaced'.length + 'o-1'.length);
  });

  it('counts no error for an outcome that holds none, and nothing for facts that are absent', () => {
    expect(textHeldBy({ outcome: { kind: 'duplicate' }, dedupKey: 'k' })).toBe(1);
    expect(textHeldBy({ outcome: { kind: 'duplicate' }, type: 'Type' })).toBe(4);
    expect(textHeldBy({ outcome: { kind: 'duplicate' }, orderId: 'o-12' })).toBe(4);
    expect(textHeldBy({ outcome: { kind: 'created' } })).toBe(0);
  });
});
