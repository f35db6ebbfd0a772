import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngestionStandIn } from '../../emulators/ingestion-emulator/ingestionStandIn.js';
import type { IngestionStandIn, TelemetryEnvelope } from '../../emulators/ingestion-emulator/ingestionStandIn.js';
import { metricTotals, tablesOf, traceDimensions, traceTree } from '../../emulators/ingestion-emulator/telemetryReport.js';
import { azureMonitorOptions } from '../../src/telemetry/azureMonitorDistro.js';

// `npm run local` as a user with APPLICATIONINSIGHTS_CONNECTION_STRING set runs it, in its own
// process (the OpenTelemetry providers are process-wide): the app exports through the Azure Monitor
// distro to what it takes for Application Insights' ingestion endpoint, and every assertion reads
// the envelopes that endpoint received, never in-process objects.
let standIn: IngestionStandIn;
let envelopes: TelemetryEnvelope[];
let output = '';

beforeAll(async () => {
  standIn = await startIngestionStandIn();
  const child = spawn(process.execPath, ['--import', 'tsx', 'dev/local/main.ts', '--orders', '8'], {
    env: {
      ...process.env,
      APPLICATIONINSIGHTS_CONNECTION_STRING: standIn.connectionString,
      NODE_EXTRA_CA_CERTS: standIn.caCertificatePath,
      APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`npm run local exited ${code}:\n${output.slice(-4000)}`);
  envelopes = [...standIn.envelopes()];
}, 180_000);

afterAll(() => standIn?.close());

describe('telemetry, as Application Insights receives it', () => {
  it('arrives through the ingestion API the exporter uses, each batch accepted whole', () => {
    expect(output).toContain('Telemetry: exporting to the Application Insights resource of APPLICATIONINSIGHTS_CONNECTION_STRING');
    expect(standIn.requests().length).toBeGreaterThan(0);
    expect(standIn.requests().every((r) => r.path === '/v2.1/track' && r.status === 200)).toBe(true);
  });

  it('exports the outcome counter with its outcome and type dimensions, so a duplicate ratio can be charted', () => {
    const outcomes = metricTotals(envelopes, 'orders.messages', 'outcome');
    expect(outcomes.created).toBeGreaterThanOrEqual(8);
    expect(outcomes.duplicate).toBeGreaterThan(0);
    expect(outcomes.conflict).toBeGreaterThan(0);
    expect(Object.keys(metricTotals(envelopes, 'orders.messages', 'type'))).toEqual(
      expect.arrayContaining(['OrderPlaced', 'PaymentReceived', 'OrderStatusChanged']),
    );
    const names = new Set(tablesOf(envelopes).customMetrics.flatMap((e) => ((e.data.baseData.metrics ?? []) as { name: string }[]).map((m) => m.name)));
    for (const name of ['orders.message.duration', 'orders.requests', 'outbox.events', 'outbox.publish_delay']) expect(names, name).toContain(name);
  });

  it('sends each per-message line as a trace with the dedup key, MessageId, outcome, order id and delivery count as custom dimensions', () => {
    const lines = traceDimensions(envelopes).filter((t) => t.customDimensions.event === 'order-message');
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines)
      expect(Object.keys(line.customDimensions)).toEqual(expect.arrayContaining(['dedupKey', 'messageId', 'outcome', 'orderId', 'deliveryCount']));
    const conflicts = lines.filter((l) => l.customDimensions.outcome === 'conflict');
    expect(conflicts.length).toBeGreaterThan(0);
    expect(new Set(conflicts.map((c) => c.severityLevel))).toEqual(new Set(['Error']));
    expect(
      traceDimensions(envelopes)
        .filter((t) => t.customDimensions.event === 'order-request' && t.customDimensions.outcome === 'conflict')
        .map((t) => t.severityLevel),
    ).toEqual(['Error']);
  });

  it('makes one order one trace: the request, the consumer, the shipment booking and the call to the carrier', () => {
    const request = traceDimensions(envelopes).find((t) => t.customDimensions.event === 'order-request' && t.customDimensions.outcome === 'created');
    const operationId = request?.operationId ?? '';
    const { requests } = tablesOf(envelopes);
    const names = requests.filter((r) => r.tags?.['ai.operation.id'] === operationId).map((r) => String(r.data.baseData.name));
    expect(names).toEqual(expect.arrayContaining(['submitOrder', 'processOrder', 'requestShipment']));
    const flat = (nodes: ReturnType<typeof traceTree>): string[] => nodes.flatMap((n) => [n.name, ...flat(n.children)]);
    const tree = traceTree(envelopes, operationId);
    // Every root is a request to the intake (a client's retry carries the same traceparent: the same operation).
    expect(new Set(tree.map((n) => n.name))).toEqual(new Set(['submitOrder']));
    expect(flat(tree)).toEqual(expect.arrayContaining(['processOrder', 'requestShipment', 'POST /shipments']));
  });

  it("keeps every trace: nothing is sampled in the worker (the host's sampler is OTEL_TRACES_SAMPLER's, asserted on the template)", () => {
    const host = JSON.parse(readFileSync('host.json', 'utf8')) as { telemetryMode?: string; logging?: unknown };
    expect(host.telemetryMode).toBe('OpenTelemetry');
    expect(host.logging).toBeUndefined();
    expect(azureMonitorOptions('InstrumentationKey=k', undefined)).toMatchObject({
      samplingRatio: 1,
      tracesPerSecond: 0,
      enableTraceBasedSamplingForLogs: false,
    });
    // And across the run: every conflict the consumer logged reached ingestion.
    const conflictLines = traceDimensions(envelopes).filter(
      (t) => t.customDimensions.event === 'order-message' && t.customDimensions.outcome === 'conflict',
    ).length;
    expect(conflictLines).toBe(metricTotals(envelopes, 'orders.messages', 'outcome').conflict);
    // One line per delivery, each exported: as many order-message traces as the counter counted.
    const counted = Object.values(metricTotals(envelopes, 'orders.messages', 'outcome')).reduce((a, b) => a + b, 0);
    expect(traceDimensions(envelopes).filter((t) => ['order-message', 'shipment-message'].includes(String(t.customDimensions.event))).length).toBe(counted);
  });
});
