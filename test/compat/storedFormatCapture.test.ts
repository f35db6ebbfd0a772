import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedFormatsRoot } from '../support/storedFormatFixture.js';
import type { StoredFormatFixture } from '../support/storedFormatFixture.js';

// The capture is what a release runs to freeze its formats: it must run to the end on the code as it
// is (it once stopped at its delayed-retry scenario for a release, unnoticed until that release's
// folder was due). And what it captures now is compared with the newest folder: documents and
// messages that differ are a change in what is stored or derived, which needs a folder of its own
// (the old ones are frozen) so that the next release is held to read both.
const newest = readdirSync(storedFormatsRoot)
  .filter((name) => /^v\d+$/.test(name))
  .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)))
  .at(-1) as string;

/** What a fixture says of the formats: documents and messages as stored and delivered, not the answers to them. */
const formats = (f: StoredFormatFixture) => ({
  documents: f.documents,
  carrierBookings: f.carrierBookings,
  deliveries: f.deliveries.map(({ answered: _answered, ...delivered }) => delivered),
  requests: f.requests.map(({ answered: _answered, ...request }) => request),
});

describe('the stored-format capture', () => {
  it(`runs to the end on this code, and captures the formats of ${newest} (else: capture the next version)`, () => {
    const into = mkdtempSync(join(tmpdir(), 'stored-formats-'));
    try {
      const run = spawnSync('node_modules/.bin/tsx', ['tools/fixtures/captureStoredFormats.ts', 'v999', into], { encoding: 'utf8', timeout: 60_000 });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const captured = readdirSync(join(into, 'v999')).sort();
      expect(captured).toEqual(
        readdirSync(join(storedFormatsRoot, newest))
          .filter((f) => f.endsWith('.json'))
          .sort(),
      );
      for (const file of captured) {
        const read = (folder: string) => JSON.parse(readFileSync(join(folder, file), 'utf8')) as StoredFormatFixture;
        expect(
          formats(read(join(into, 'v999'))),
          `${file}: this code stores or derives something ${newest} does not show. Old folders are frozen: run \`npx tsx tools/fixtures/captureStoredFormats.ts v${Number(newest.slice(1)) + 1}\` and write its README`,
        ).toEqual(formats(read(join(storedFormatsRoot, newest))));
      }
    } finally {
      rmSync(into, { recursive: true, force: true });
    }
  }, 90_000);
});
