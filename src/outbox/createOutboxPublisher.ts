import type { Settings } from '../config.js';
import { resolveRuntime } from '../consumer/index.js';
import type { RuntimeOverrides } from '../consumer/index.js';
import type { VersionedDocument } from '../idempotency/index.js';
import { OutboxMetrics, reportOutboxFailure, reportOutboxLag } from '../telemetry/index.js';
import type { LogSink } from '../telemetry/index.js';
import type { EventSender } from './eventSender.js';
import { isPendingOutbox } from './outboxDocument.js';
import type { OutboxDocument } from './outboxDocument.js';
import { TransientPublishError, publishOutboxEntries } from './publishOutbox.js';
import type { PublishContext, PublishResult } from './publishOutbox.js';
import { ServiceBusEventSender } from './serviceBusEventSender.js';
import { sweepOutbox } from './sweepOutbox.js';
import type { OutboxSweepResult } from './sweepOutbox.js';

export interface OutboxPublisherOverrides extends Pick<RuntimeOverrides, 'meter' | 'now' | 'store'> {
  readonly sender?: EventSender;
}

export interface OutboxPublisher {
  /** A batch from the change feed: every kind of document comes by; only pending outbox entries are sent. */
  publishChanges(documents: readonly Record<string, unknown>[], log: LogSink): Promise<PublishResult>;
  sweep(log: LogSink): Promise<OutboxSweepResult>;
  close(): Promise<void>;
}

/**
 * The publisher's composition root: the orders store, a Service Bus sender on the trigger's
 * connection, the metrics and the log lines. Both entry points throw `TransientPublishError` when a
 * destination failed for now, after everything else went out: the trigger's retry policy (or the
 * next sweep) tries again, and what was sent is sent again under the same MessageId.
 */
export function createOutboxPublisher(settings: Settings, overrides: OutboxPublisherOverrides = {}): OutboxPublisher {
  const sender = overrides.sender ?? new ServiceBusEventSender(settings.serviceBus);
  const { store, now, meter } = resolveRuntime(settings, overrides);
  const ctx: PublishContext = {
    store,
    sender,
    now,
    publishedTtlSeconds: settings.outbox.publishedTtlSeconds,
    markConcurrency: settings.outbox.markConcurrency,
  };
  const outboxMetrics = new OutboxMetrics(meter);

  const report = (log: LogSink, source: string, result: PublishResult) => {
    for (const entry of result.published) {
      outboxMetrics.recordEvents('published', 1, entry.destination);
      // Stryker disable next-line ConditionalExpression: a published entry always has its time (publishOutbox sets it with the state); the guard is for the type
      if (entry.publishedAt) outboxMetrics.recordPublishDelay((Date.parse(entry.publishedAt) - Date.parse(entry.createdAt)) / 1000);
    }
    outboxMetrics.recordEvents('already-handled', result.alreadyHandled);
    for (const entry of result.failed) {
      outboxMetrics.recordEvents('failed', 1, entry.destination);
      reportOutboxFailure(log, source, {
        id: entry.id,
        orderId: entry.orderId,
        destination: entry.destination,
        messageId: entry.message.messageId,
        // Stryker disable next-line OptionalChaining,StringLiteral: a failed entry always has its failure (set with the state); the fallback is for the type
        reason: entry.failure?.reason ?? 'unknown',
        // Stryker disable next-line OptionalChaining,StringLiteral: as above
        detail: entry.failure?.detail ?? '',
      });
    }
    const retryLater = [...result.transient, ...result.unmarked];
    const line = {
      event: 'outbox-publish',
      source,
      published: result.published.length,
      failed: result.failed.length,
      alreadyHandled: result.alreadyHandled,
      unmarked: result.unmarked.length,
    };
    if (retryLater.length > 0) log.warn(JSON.stringify({ ...line, retryLater: [...new Set(retryLater.map((t) => t.message))] }));
    else if (line.published + line.failed + line.alreadyHandled > 0) log.info(JSON.stringify(line));
    if (retryLater.length > 0) throw new TransientPublishError(retryLater);
  };

  return {
    async publishChanges(documents, log) {
      const entries = documents.filter(isPendingOutbox).map(fromChangeFeed);
      const result = await publishOutboxEntries(entries, ctx);
      report(log, 'change-feed', result);
      return result;
    },
    async sweep(log) {
      const result = await sweepOutbox(ctx, { minAgeSeconds: settings.outbox.sweepMinAgeSeconds, maxItemsPerRun: settings.outbox.sweepMaxItemsPerRun });
      reportOutboxLag(log, outboxMetrics, result, settings.outbox.lagAlertSeconds);
      report(log, 'sweep', result.published);
      return result;
    },
    close: () => sender.close(),
  };
}

/** A change feed document carries its etag (to mark it) and its `_lsn`, which is not ours to write back. */
function fromChangeFeed(document: Record<string, unknown>): VersionedDocument<OutboxDocument> {
  const { _lsn: _ignored, ...rest } = document;
  return { document: rest as unknown as OutboxDocument, etag: String(document._etag) };
}
