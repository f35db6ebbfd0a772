import { PermanentMessageError } from '../idempotency/index.js';
import { applicationProperty } from './envelope.js';
import type { MessageEnvelope } from './envelope.js';

/** The CloudEvents attributes this consumer uses, from either content mode of the AMQP binding. */
export interface CloudEventAttributes {
  readonly id?: string;
  readonly source?: string;
  readonly type?: string;
  readonly mode: 'structured' | 'binary';
}

export interface UnwrappedBody {
  readonly cloudEvent?: CloudEventAttributes;
  /** The business payload: the event's `data` in structured mode, otherwise the body itself. */
  readonly payload: unknown;
}

const structuredContentType = /^application\/cloudevents\+json\b/i;

/**
 * Recognises a CloudEvent: structured mode by its content type (the body is the event), binary mode
 * by `cloudEvents:`-prefixed application properties (the AMQP binding; `cloudEvents_` is the
 * variant for brokers that refuse a colon). Anything else is a plain message.
 */
export function unwrapCloudEvent(envelope: MessageEnvelope, body: unknown): UnwrappedBody {
  if (envelope.contentType && structuredContentType.test(envelope.contentType)) {
    return unwrapStructured(body);
  }
  const binary = binaryAttributes(envelope);
  return binary ? { cloudEvent: binary, payload: body } : { payload: body };
}

function unwrapStructured(body: unknown): UnwrappedBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PermanentMessageError('SchemaViolation', 'a structured CloudEvent must be a JSON object');
  }
  const event = body as Record<string, unknown>;
  const cloudEvent: CloudEventAttributes = {
    id: stringOrUndefined(event.id),
    source: stringOrUndefined(event.source),
    type: stringOrUndefined(event.type),
    mode: 'structured',
  };
  if (event.data !== undefined) return { cloudEvent, payload: event.data };
  if (typeof event.data_base64 === 'string') {
    return { cloudEvent, payload: parseBase64Json(event.data_base64) };
  }
  throw new PermanentMessageError('SchemaViolation', 'data: a structured CloudEvent must carry data or data_base64');
}

function binaryAttributes(envelope: MessageEnvelope): CloudEventAttributes | undefined {
  const attribute = (name: string) =>
    stringOrUndefined(applicationProperty(envelope, `cloudEvents:${name}`) ?? applicationProperty(envelope, `cloudEvents_${name}`));
  const id = attribute('id');
  const source = attribute('source');
  if (id === undefined && source === undefined) return undefined;
  return { id, source, type: attribute('type'), mode: 'binary' };
}

function parseBase64Json(data: string): unknown {
  try {
    return JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    throw new PermanentMessageError('InvalidJson', 'data_base64: the CloudEvent data is not base64-encoded JSON');
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
