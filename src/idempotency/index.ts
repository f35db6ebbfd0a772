export { canonicalJson, fingerprintPayload } from './fingerprint.js';
export { consumerKeyPrefix, joinKeyParts, maxDedupKeyLength, resolveDedupKey } from './dedupKey.js';
export type { DedupKey, DedupKeyCandidates, DedupKeySource } from './dedupKey.js';
export { checkMarkerRetention, checkParkedItemRetention, checkRequestKeyRetention, checkResubmitHorizon, resubmitMarginSeconds } from './retention.js';
export type {
  ParkedItemRetentionInputs,
  RequestKeyRetentionInputs,
  ResubmitHorizonCheck,
  ResubmitHorizonInputs,
  ResubmittedCopyInputs,
  RetentionCheck,
  RetentionInputs,
} from './retention.js';
export { assertQueryable, create, matchesQuery, replace } from './documentStore.js';
export type { CommitResult, DocumentQuery, DocumentStore, StoredDocument, VersionedDocument, WriteOperation } from './documentStore.js';
export { decideDelayedRetry, delayedRetryDelayMs, inInvocationPauseMs } from './retrySchedule.js';
export type { DelayedRetryDecision, RetryPolicy } from './retrySchedule.js';
export { InMemoryDocumentStore } from './inMemoryDocumentStore.js';
export { classifyRecord, createOrClassify, readAndClassify } from './createOrClassify.js';
export type { CommitOrClassifyResult, CreateOrClassifyResult, ExistingRecord, IsSameRequest, VanishedRecord } from './createOrClassify.js';
export type { OutcomeKind, ParkedItemRejected, ProcessingOutcome } from './outcome.js';
export { PermanentMessageError, TransientStoreError, failureCodes, permanentFailureCodes } from './errors.js';
export type { DomainFailureCode, FailureCode, PermanentFailureCode } from './errors.js';
export { documentId, escapeIdPart, isCosmosSafeId, maxCosmosIdLength } from './documentIds.js';
