/** The part of an OpenTelemetry SDK log record this processor touches (structurally, so no SDK import here). */
export interface WritableLogRecord {
  readonly body?: unknown;
  setAttributes(attributes: Record<string, string | number | boolean>): unknown;
}

/**
 * Every structured line this app writes (`{"event":"order-message","dedupKey":...}`) reaches
 * Application Insights as a trace whose custom dimensions are the line's fields, so a query can
 * filter on `customDimensions.dedupKey` instead of parsing the message. Registered with the Azure
 * Monitor distro as a log record processor; a line that is not such JSON is left as it is.
 */
export class StructuredLineAttributes {
  onEmit(record: WritableLogRecord): void {
    const fields = structuredFields(record.body);
    if (fields) record.setAttributes(fields);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The top-level fields of a JSON object line with an `event`, as attribute values: nested values as JSON text. */
export function structuredFields(body: unknown): Record<string, string | number | boolean> | undefined {
  if (typeof body !== 'string' || !body.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { event?: unknown }).event !== 'string') return undefined;
  const fields: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (value === null || value === undefined) continue;
    fields[name] = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : JSON.stringify(value);
  }
  return fields;
}
