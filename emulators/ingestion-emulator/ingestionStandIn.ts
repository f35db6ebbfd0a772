import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { generate } from 'selfsigned';
import { closeServer, readRequestBody } from '../emulator-kit/httpServers.js';

/**
 * Application Insights' ingestion endpoint (Breeze) as the Azure Monitor exporter speaks to it:
 * `POST /v2.1/track` (or `/v2/track`) with a JSON array of envelopes, gzip-encoded or not; each
 * envelope needs `name`, `time`, `iKey` (this resource's) and `data.baseType`. The answer is
 * Breeze's: 200 with `{ itemsReceived, itemsAccepted, errors: [] }`, 206 naming the envelopes it
 * refused (by index, 400), 400 for a body that is not a JSON array. Over HTTPS only, as Azure
 * (the exporter turns an http:// endpoint into https://): its certificate is made at start for
 * 127.0.0.1, and a process that exports to it trusts it with NODE_EXTRA_CA_CERTS. It keeps what it
 * accepted, so tests and `npm run local` read the telemetry as Application Insights would store it
 * (`GET /_standin/envelopes` gives them to another process).
 */
export interface IngestionStandIn {
  readonly url: string;
  /** `InstrumentationKey=…;IngestionEndpoint=…`: what APPLICATIONINSIGHTS_CONNECTION_STRING holds in Azure. */
  readonly connectionString: string;
  readonly instrumentationKey: string;
  /** Its self-signed certificate, as a file: NODE_EXTRA_CA_CERTS of a process that exports here. */
  readonly caCertificatePath: string;
  envelopes(): readonly TelemetryEnvelope[];
  /** POSTs received, with how many envelopes each carried. */
  requests(): readonly { path: string; gzip: boolean; envelopes: number; status: number }[];
  clear(): void;
  close(): Promise<void>;
}

export interface TelemetryEnvelope {
  readonly name: string;
  readonly time: string;
  readonly iKey: string;
  readonly tags?: Readonly<Record<string, string>>;
  readonly data: { readonly baseType: string; readonly baseData: Readonly<Record<string, unknown>> };
}

export async function startIngestionStandIn(options: { port?: number } = {}): Promise<IngestionStandIn> {
  const instrumentationKey = randomUUID();
  const accepted: TelemetryEnvelope[] = [];
  const received: { path: string; gzip: boolean; envelopes: number; status: number }[] = [];
  const tls = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  const caCertificatePath = join(mkdtempSync(join(tmpdir(), 'ingestion-stand-in-')), 'cert.pem');
  writeFileSync(caCertificatePath, tls.cert);
  const server = createServer({ cert: tls.cert, key: tls.private }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const raw = await readRequestBody(req);
    if (req.method === 'GET' && path === '/_standin/envelopes') return answer(res, 200, accepted);
    if (req.method !== 'POST' || !['/v2.1/track', '/v2/track'].includes(path)) {
      received.push({ path, gzip: false, envelopes: 0, status: 404 });
      res.writeHead(404).end();
      return;
    }
    const gzip = req.headers['content-encoding'] === 'gzip';
    let items: unknown;
    try {
      items = JSON.parse((gzip ? gunzipSync(raw) : raw).toString('utf8'));
    } catch {
      items = undefined;
    }
    if (!Array.isArray(items)) {
      received.push({ path, gzip, envelopes: 0, status: 400 });
      return answer(res, 400, {
        itemsReceived: 0,
        itemsAccepted: 0,
        errors: [{ index: 0, statusCode: 400, message: 'the body is not a JSON array of envelopes' }],
      });
    }
    const errors: { index: number; statusCode: number; message: string }[] = [];
    items.forEach((item, index) => {
      const problem = envelopeProblem(item, instrumentationKey);
      if (problem) errors.push({ index, statusCode: 400, message: problem });
      else accepted.push(item as TelemetryEnvelope);
    });
    const status = errors.length === 0 ? 200 : 206;
    received.push({ path, gzip, envelopes: items.length, status });
    answer(res, status, { itemsReceived: items.length, itemsAccepted: items.length - errors.length, errors });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    instrumentationKey,
    caCertificatePath,
    connectionString: `InstrumentationKey=${instrumentationKey};IngestionEndpoint=${url};LiveEndpoint=${url}`,
    envelopes: () => [...accepted],
    requests: () => [...received],
    clear: () => {
      accepted.length = 0;
      received.length = 0;
    },
    close: () => closeServer(server),
  };
}

function envelopeProblem(item: unknown, instrumentationKey: string): string | undefined {
  if (typeof item !== 'object' || item === null) return 'an envelope must be an object';
  const e = item as Record<string, unknown>;
  if (typeof e.name !== 'string' || e.name === '') return "Field 'name' on type 'Envelope' is required but missing or empty.";
  if (typeof e.time !== 'string' || Number.isNaN(Date.parse(e.time))) return "Field 'time' on type 'Envelope' is required but missing or not a date.";
  if (e.iKey !== instrumentationKey) return 'Invalid instrumentation key';
  const data = e.data as Record<string, unknown> | undefined;
  if (typeof data?.baseType !== 'string' || typeof data.baseData !== 'object' || data.baseData === null)
    return "Field 'baseType' on type 'Data' is required but missing or empty.";
  return undefined;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}
