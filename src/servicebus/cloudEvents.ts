import { PermanentMessageError } from '../idempotency/index.js';
import { applicationProperty } from './envelope.js';
import type { MessageEnvelope } from './envelope.js';
import { parseEmbeddedJson } from './messageBody.js';

/**
 * The CloudEvents attributes this consumer uses, from either content mode of the AMQP binding, as
 * the message carries them: `id` and `source` are checked where the key is chosen (a declared key
 * is used or refused), `type` here.
 */
export interface CloudEventAttributes {
  readonly id?: unknown;
  readonly source?: unknown;
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
  // The spec requires id and source: a structured event without them has no key of its own.
  const cloudEvent: CloudEventAttributes = { id: event.id ?? null, source: event.source ?? null, type: typeOf(event.type), mode: 'structured' };
  if (event.data !== undefined) return { cloudEvent, payload: event.data };
  if (typeof event.data_base64 === 'string') {
    return { cloudEvent, payload: parseBase64Json(event.data_base64) };
  }
  throw new PermanentMessageError('SchemaViolation', 'data: a structured CloudEvent must carry data or data_base64');
}

function binaryAttributes(envelope: MessageEnvelope): CloudEventAttributes | undefined {
  const attribute = (name: string) => applicationProperty(envelope, `cloudEvents:${name}`) ?? applicationProperty(envelope, `cloudEvents_${name}`);
  const id = attribute('id');
  const source = attribute('source');
  if (id === undefined && source === undefined) return undefined;
  return { id: id ?? null, source: source ?? null, type: typeOf(attribute('type')), mode: 'binary' };
}

function typeOf(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new PermanentMessageError('InvalidCloudEvent', `the CloudEvent type must be a string, not ${value === null ? 'null' : typeof value}`);
}

/** The decoded data is a body of its own: bounded before it is parsed, as decodeJsonBody bounds the envelope's. */
function parseBase64Json(data: string): unknown {
  return parseEmbeddedJson(Buffer.from(data, 'base64').toString('utf8'), 'data_base64');
}
