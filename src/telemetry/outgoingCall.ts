import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
import type { Attributes, SpanContext } from '@opentelemetry/api';

const tracer = trace.getTracer('idempotent-order-consumer');

/**
 * Runs an outgoing HTTP call as a client span, a dependency in Application Insights, and hands the
 * call the `traceparent` to send: the span's own, so the callee's work hangs under this call in one
 * trace. The parent is the active span (the invocation, when telemetry runs), else the given
 * traceparent. With no tracer registered the span records nothing and the header is that parent.
 */
export async function withClientSpan<T>(
  name: string,
  attributes: Attributes,
  traceparent: string | undefined,
  call: (header: string | undefined) => Promise<T>,
  statusOf: (result: T) => number,
): Promise<T> {
  const active = trace.getSpanContext(context.active());
  const parent = active && isSpanContextValid(active) ? context.active() : traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  const own = span.spanContext();
  try {
    const result = await call(isSpanContextValid(own) ? traceparentOf(own) : traceparent);
    const status = statusOf(result);
    span.setAttribute('http.response.status_code', status);
    span.setStatus({ code: status >= 400 ? SpanStatusCode.ERROR : SpanStatusCode.OK });
    return result;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    throw error;
  } finally {
    span.end();
  }
}

export function traceparentOf(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags & 1}`;
}
