import { open } from 'node:fs/promises';
import type { ServiceBusReceivedMessage } from '@azure/service-bus';
import { dataBodyBytes } from '../servicebus/index.js';

/**
 * `purge` keeps what it removes: each message is written to a JSON-lines file and flushed to disk
 * before the broker is told to remove it, so a crash or a full disk leaves the message in the
 * dead-letter queue rather than nowhere. The file is created new (never overwritten).
 */
export interface PurgeExport {
  readonly path: string;
  /** Resolves once the line is on disk; throws (and the message stays) when it cannot be. */
  readonly write: (message: ServiceBusReceivedMessage) => Promise<void>;
  readonly close: () => Promise<void>;
  readonly count: () => number;
}

/** A file name for one run: the entity and the instant, in the working directory. */
export function defaultPurgeExportPath(scope: Readonly<Record<string, string>>, epochMs: number): string {
  const entity = scope.topic ? `${scope.topic}-${scope.subscription ?? ''}` : (scope.queue ?? 'queue');
  const stamp = new Date(epochMs).toISOString().replace(/[:.]/g, '-');
  return `purge-${entity.replace(/[^A-Za-z0-9._-]/g, '_')}-${stamp}.jsonl`;
}

/** One line per message: everything the broker holds of it, the body as text or base64. */
export function exportLine(m: ServiceBusReceivedMessage): string {
  // A data section is kept as its bytes: the SDK's `body` is its own JSON.parse of them, which rounds
  // large integers and drops repeated fields, and the export is all that is left of a purged message.
  const bytes = dataBodyBytes(m);
  const body =
    bytes !== undefined
      ? bytesBody(bytes)
      : m.body instanceof Uint8Array
        ? { bodyBase64: Buffer.from(m.body).toString('base64') }
        : typeof m.body === 'string'
          ? { bodyText: m.body }
          : { body: m.body };
  return `${JSON.stringify({
    sequenceNumber: m.sequenceNumber?.toString(),
    messageId: m.messageId === undefined ? undefined : String(m.messageId),
    enqueuedTimeUtc: m.enqueuedTimeUtc?.toISOString(),
    deadLetterReason: m.deadLetterReason,
    deadLetterErrorDescription: m.deadLetterErrorDescription,
    deadLetterSource: m.deadLetterSource,
    deliveryCount: m.deliveryCount,
    sessionId: m.sessionId,
    correlationId: m.correlationId === undefined ? undefined : String(m.correlationId),
    subject: m.subject,
    to: m.to,
    contentType: m.contentType,
    applicationProperties: m.applicationProperties,
    ...body,
  })}\n`;
}

/** UTF-8 text as it is; anything else as base64, so no byte is replaced. */
function bytesBody(bytes: Uint8Array): { bodyText: string } | { bodyBase64: string } {
  try {
    return { bodyText: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { bodyBase64: Buffer.from(bytes).toString('base64') };
  }
}

export async function openPurgeExport(path: string): Promise<PurgeExport> {
  const handle = await open(path, 'wx');
  let written = 0;
  return {
    path,
    write: async (m) => {
      await handle.write(exportLine(m));
      await handle.datasync();
      written += 1;
    },
    close: () => handle.close(),
    count: () => written,
  };
}
