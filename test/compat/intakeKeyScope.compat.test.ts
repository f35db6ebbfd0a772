import { describe, expect, it } from 'vitest';
import { intakeKeyRecordId, sharedCaller } from '../../src/intake/index.js';
import { loadStoredFormatFixtures } from '../support/storedFormatFixture.js';

// Key records written before keys had a caller: INTAKE_CALLER_IDENTITY=shared (the default) must
// find each one under the id it was stored with, so a retry across the deploy is replayed.
const keyRecords = loadStoredFormatFixtures().flatMap((fixture) =>
  fixture.documents
    .filter((d) => (d.document as { docType?: string }).docType === 'intake-key')
    .map((d) => [`${fixture.version}/${fixture.scenario}`, d.partitionKey, d.document as { id: string; idempotencyKey: string }] as const),
);

describe('intake key records of earlier releases, in the shared caller scope', () => {
  it('finds key records in the fixtures', () => {
    expect(keyRecords.length).toBeGreaterThanOrEqual(3);
  });

  it.each(keyRecords)('%s: the shared scope derives the stored id and partition of key %s', (_name, partitionKey, record) => {
    expect(intakeKeyRecordId(record.idempotencyKey, sharedCaller)).toBe(record.id);
    expect(intakeKeyRecordId(record.idempotencyKey, sharedCaller)).toBe(partitionKey);
    expect(record).not.toHaveProperty('caller');
  });
});
