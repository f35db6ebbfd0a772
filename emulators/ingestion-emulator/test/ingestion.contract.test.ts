import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngestionStandIn } from '../ingestionStandIn.js';
import type { IngestionStandIn } from '../ingestionStandIn.js';

/**
 * What the Azure Monitor exporter needs from Application Insights' ingestion endpoint, and what
 * emulators/ingestion-emulator/ offers. Runs against the stand-in, and also against a real resource when
 * INGESTION_CONTRACT_CONNECTION_STRING names one that accepts instrumentation-key ingestion (the
 * Bicep's resource does not: it takes Entra ID tokens only).
 */
interface Target {
  readonly name: string;
  readonly endpoint: string;
  readonly instrumentationKey: string;
  readonly ca?: string;
}

const real = process.env.INGESTION_CONTRACT_CONNECTION_STRING;
if (!real) console.log('Ingestion contract against Application Insights: skipped because INGESTION_CONTRACT_CONNECTION_STRING is not set (the stand-in runs)');
const targets: Target[] = [];
let standIn: IngestionStandIn;

function parse(connectionString: string): { endpoint: string; instrumentationKey: string } {
  const fields = new Map(connectionString.split(';').map((p) => [p.slice(0, p.indexOf('=')).toLowerCase(), p.slice(p.indexOf('=') + 1)] as const));
  return { endpoint: fields.get('ingestionendpoint') ?? 'https://dc.services.visualstudio.com/', instrumentationKey: fields.get('instrumentationkey') ?? '' };
}

beforeAll(async () => {
  standIn = await startIngestionStandIn();
  targets.push({ name: 'the stand-in', ...parse(standIn.connectionString), ca: readFileSync(standIn.caCertificatePath, 'utf8') });
  if (real) targets.push({ name: 'Application Insights', ...parse(real) });
});
afterAll(() => standIn?.close());

const envelope = (target: Target, overrides: Record<string, unknown> = {}) => ({
  name: 'Microsoft.ApplicationInsights.Message',
  time: new Date().toISOString(),
  iKey: target.instrumentationKey,
  tags: { 'ai.cloud.role': 'contract-test' },
  data: { baseType: 'MessageData', baseData: { ver: 2, message: 'ingestion contract', properties: { dedupKey: 'k-1' } } },
  ...overrides,
});

function track(
  target: Target,
  body: Buffer,
  gzip = false,
): Promise<{ status: number; body: { itemsReceived?: number; itemsAccepted?: number; errors?: { index: number; statusCode: number }[] } }> {
  const url = new URL('v2.1/track', target.endpoint.endsWith('/') ? target.endpoint : `${target.endpoint}/`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', ca: target.ca, headers: { 'Content-Type': 'application/json', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') as never }));
      },
    );
    req.on('error', reject);
    req.end(gzip ? gzipSync(body) : body);
  });
}

describe.each([0, 1])('the ingestion endpoint (target %i)', (index) => {
  const target = () => targets[index];
  it.runIf(index === 0 || real !== undefined)('accepts a batch of valid envelopes with 200 and their counts, plain or gzip, over HTTPS only', async () => {
    const t = target()!;
    const batch = Buffer.from(JSON.stringify([envelope(t), envelope(t)]));
    for (const gzip of [false, true]) expect(await track(t, batch, gzip)).toEqual({ status: 200, body: { itemsReceived: 2, itemsAccepted: 2, errors: [] } });
    expect(t.endpoint).toMatch(/^https:\/\//);
  });

  it.runIf(index === 0 || real !== undefined)('refuses an envelope without a name with 206, naming its index, and keeps the others', async () => {
    const t = target()!;
    const answer = await track(t, Buffer.from(JSON.stringify([envelope(t), envelope(t, { name: undefined })])));
    expect(answer.status).toBe(206);
    expect(answer.body).toMatchObject({ itemsReceived: 2, itemsAccepted: 1, errors: [expect.objectContaining({ index: 1, statusCode: 400 })] });
  });

  it.runIf(index === 0 || real !== undefined)('refuses a body that is not JSON with 400', async () => {
    expect((await track(target()!, Buffer.from('not json'))).status).toBe(400);
  });
});

describe('the stand-in', () => {
  it('keeps what it accepted, for the tests and the summary, and hands it to another process', async () => {
    const t = targets[0]!;
    standIn.clear();
    await track(t, Buffer.from(JSON.stringify([envelope(t)])));
    expect(standIn.envelopes()).toEqual([expect.objectContaining({ data: expect.objectContaining({ baseType: 'MessageData' }) })]);
    const served = await new Promise<unknown>((resolve, reject) => {
      request(new URL('_standin/envelopes', t.endpoint), { ca: t.ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
      })
        .on('error', reject)
        .end();
    });
    expect(served).toEqual(standIn.envelopes());
  });
});
