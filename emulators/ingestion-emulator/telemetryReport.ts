import type { TelemetryEnvelope } from './ingestionStandIn.js';

/** What Application Insights would show of the captured envelopes: its tables, by the names KQL uses. */
export interface TelemetryTables {
  readonly requests: readonly TelemetryEnvelope[];
  readonly dependencies: readonly TelemetryEnvelope[];
  readonly traces: readonly TelemetryEnvelope[];
  readonly customMetrics: readonly TelemetryEnvelope[];
}

export function tablesOf(envelopes: readonly TelemetryEnvelope[]): TelemetryTables {
  const of = (baseType: string) => envelopes.filter((e) => e.data.baseType === baseType);
  return { requests: of('RequestData'), dependencies: of('RemoteDependencyData'), traces: of('MessageData'), customMetrics: of('MetricData') };
}

interface MetricPoint {
  readonly name: string;
  readonly value: number;
  readonly count?: number;
  readonly max?: number;
}

/** `customMetrics | where name == <name> | summarize sum(value) by tostring(customDimensions.<dimension>)`. */
export function metricTotals(envelopes: readonly TelemetryEnvelope[], name: string, dimension: string): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const envelope of tablesOf(envelopes).customMetrics) {
    const points = (envelope.data.baseData.metrics ?? []) as MetricPoint[];
    const properties = (envelope.data.baseData.properties ?? {}) as Record<string, string>;
    for (const point of points.filter((p) => p.name === name)) {
      const key = properties[dimension] ?? '(none)';
      totals[key] = (totals[key] ?? 0) + point.value;
    }
  }
  return totals;
}

/** The custom dimensions of each trace (log line), as KQL's `customDimensions`. */
export function traceDimensions(
  envelopes: readonly TelemetryEnvelope[],
): { message: string; severityLevel: unknown; operationId?: string; customDimensions: Record<string, string> }[] {
  return tablesOf(envelopes).traces.map((e) => ({
    message: String(e.data.baseData.message ?? ''),
    severityLevel: e.data.baseData.severityLevel,
    operationId: e.tags?.['ai.operation.id'],
    customDimensions: (e.data.baseData.properties ?? {}) as Record<string, string>,
  }));
}

export interface SpanNode {
  readonly kind: 'request' | 'dependency';
  readonly id: string;
  readonly name: string;
  readonly parentId?: string;
  readonly children: SpanNode[];
}

/** One operation's requests and dependencies as a tree, by `ai.operation.parentId`. */
export function traceTree(envelopes: readonly TelemetryEnvelope[], operationId: string): SpanNode[] {
  const { requests, dependencies } = tablesOf(envelopes);
  const nodes = [...requests.map((e) => [e, 'request'] as const), ...dependencies.map((e) => [e, 'dependency'] as const)]
    .filter(([e]) => e.tags?.['ai.operation.id'] === operationId)
    .map(([e, kind]): SpanNode => ({
      kind,
      id: String(e.data.baseData.id),
      name: String(e.data.baseData.name ?? ''),
      parentId: e.tags?.['ai.operation.parentId'],
      children: [],
    }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const roots: SpanNode[] = [];
  for (const node of nodes) {
    const parent = node.parentId === undefined ? undefined : byId.get(node.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/** Requests in full; under each, its first dependencies and how many more (a consumer makes several store calls). */
export function printTree(roots: readonly SpanNode[], indent = '', dependenciesShown = 3): string[] {
  const requests = roots.filter((n) => n.kind === 'request');
  const dependencies = roots.filter((n) => n.kind === 'dependency');
  const shown = dependencies.slice(0, dependenciesShown).map((d) => `${indent}→ ${d.name.length > 90 ? `${d.name.slice(0, 87)}...` : d.name}`);
  const more = dependencies.length > dependenciesShown ? [`${indent}→ ... ${dependencies.length - dependenciesShown} more`] : [];
  return [...shown, ...more, ...requests.flatMap((node) => [`${indent}▸ ${node.name}`, ...printTree(node.children, `${indent}  `, dependenciesShown)])];
}

/** The short summary `npm run local` prints with telemetry on: outcomes as exported, and one order's trace. */
export function telemetrySummary(envelopes: readonly TelemetryEnvelope[], operationId?: string): string[] {
  const outcomes = metricTotals(envelopes, 'orders.messages', 'outcome');
  const lines = [
    `  envelopes received: ${envelopes.length} (requests ${tablesOf(envelopes).requests.length}, dependencies ${tablesOf(envelopes).dependencies.length}, traces ${tablesOf(envelopes).traces.length}, metrics ${tablesOf(envelopes).customMetrics.length})`,
    `  orders.messages by outcome, as exported: ${
      Object.entries(outcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  ];
  if (operationId) lines.push(`  one order's trace (operation ${operationId}):`, ...printTree(traceTree(envelopes, operationId), '    '));
  return lines;
}
