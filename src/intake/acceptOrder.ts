import type { ConsumerRuntime } from '../consumer/index.js';
import { TransientStoreError, classifyRecord, create, createOrClassify, replace } from '../idempotency/index.js';
import type { CommitResult, CreateOrClassifyResult, OutcomeKind, VersionedDocument, WriteOperation } from '../idempotency/index.js';
import { messageIdNamingBody, newOutboxDocument, orderIntakeSource } from '../outbox/index.js';
import type { OutboxDocument } from '../outbox/index.js';
import { intakeKeyRecordId, leaseIsLive, orderIntakeClaimId, orderPlacedOutboxId } from './intakeDocuments.js';
import type { IntakeKeyRecord, OrderIntakeClaim } from './intakeDocuments.js';
import { callerScope } from './intakeCaller.js';
import type { CallerIdentityMode, IntakeCaller } from './intakeCaller.js';
import { accepted, problem, replayed } from './intakeResponse.js';
import type { IntakeResponse } from './intakeResponse.js';
import type { OrderRequest } from './readOrderRequest.js';

/** A request with the caller it came from: the key is looked up in that caller's scope, the order's claim must be that caller's. */
export interface CallerOrderRequest extends OrderRequest {
  readonly caller: IntakeCaller;
}

/** The runtime every root resolves (its store, clock and race limit), and what the intake adds to it. */
export interface IntakeContext extends Pick<ConsumerRuntime, 'store' | 'now' | 'maxConcurrencyAttempts'> {
  /** Where OrderPlaced goes: the orders queue, whose consumer creates the order. */
  readonly ordersQueueName: string;
  readonly keyRetentionSeconds: number;
  readonly leaseSeconds: number;
  /** Whom a key and an order belong to: one shared scope, or the Entra ID principal (INTAKE_CALLER_IDENTITY). */
  readonly callerIdentity: CallerIdentityMode;
}

/**
 * What handling one request came to, in the outcome vocabulary the message consumers use:
 * `created` (accepted now), `duplicate` (a stored answer replayed), `conflict` (the key was used
 * for another request), `retry` (the first request is still being handled) and `invalid` (the
 * order exists under another key, or is not this caller's).
 */
export interface IntakeResult {
  readonly outcome: Extract<OutcomeKind, 'created' | 'duplicate' | 'conflict' | 'retry' | 'invalid'>;
  readonly response: IntakeResponse;
}

/** The key's record as one request knows it: a record under the id is that request's when it holds its fingerprint. */
interface RequestKey {
  readonly id: string;
  readonly fingerprint: string;
}

/** Seconds a client waits before asking again about a request still being handled: most take milliseconds. */
export const inProgressRetryAfterSeconds = 1;

/**
 * Accepts an order once per idempotency key, exactly once in effect:
 * 1. the key's record is created `in-progress` (the store refuses a second: two concurrent copies
 *    cannot both proceed), or the existing one decides: another body 422 (unless the order's
 *    claim holds this very request, accepted before its record ran out: replayed), completed
 *    replayed, in progress 409 unless its owner's lease has expired (then this request takes over);
 * 2. the order's claim and its OrderPlaced outbox entry are created in one batch in the order's
 *    partition: the claim's fixed id lets the store refuse a second claim for one order;
 * 3. the key's record is completed with the response.
 * A crash after 2 leaves the claim, which holds the response: the client's retry finds it and gets
 * the stored answer, with no second event. A crash before 2 leaves nothing a retry cannot redo.
 * Once the claim exists the answer is decided, so a store failure after 2 never turns it into a
 * 503: step 3 is left to the retry (which finds the claim), and a batch whose answer was lost is
 * judged by reading the claim back.
 */
export async function acceptOrderOnce(request: CallerOrderRequest, owner: string, ctx: IntakeContext, traceparent?: string): Promise<IntakeResult> {
  const key: RequestKey = { id: intakeKeyRecordId(request.idempotencyKey, request.caller), fingerprint: request.fingerprint };
  let readFirst = true;
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const found = await findOrCreateKeyRecord(request, key.id, owner, ctx, readFirst);
    if (found.kind === 'committed') return carryOut(request, key, ctx, traceparent);
    // Reported to exist, then read as gone (its retention ran out): create it again, without a read that would say the same.
    readFirst = found.kind !== 'vanished';
    if (found.kind === 'vanished') continue;
    if (found.kind === 'other-request') return reusedKeyUnlessClaimed(request, ctx);
    const existing = found.existing;
    const record = existing.document;
    // Stryker disable next-line LogicalOperator,ConditionalExpression: a completed record always holds its response, an in-progress one never does
    if (record.state === 'completed' && record.response) return { outcome: 'duplicate', response: replayed(record.response) };
    // In progress: its batch may have committed already (the owner died before step 3).
    const claim = await ctx.store.read<OrderIntakeClaim>(request.order.orderId, orderIntakeClaimId(request.order.orderId));
    if (claim && isSameRequest(claim.document, asClaimed(request)))
      return finish(key, { outcome: 'duplicate', response: replayed(claim.document.response) }, ctx);
    if (leaseIsLive(record, ctx.now())) return { outcome: 'retry', response: inProgress(request) };
    if (await takeOver(existing, owner, ctx)) return carryOut(request, key, ctx, traceparent);
  }
  // Every read found the record changed again: a storm of retries of one request; ask for one more.
  return { outcome: 'retry', response: inProgress(request) };
}

/**
 * A key this release refuses, which the previous release accepted: what that release stored for
 * this very request (its completed key record, or the order's claim, which outlives the record and
 * holds the answer of a request whose record was never completed), replayed; a 409 while an
 * instance of that release still handles it; undefined when there is none, and the request is refused. Nothing is written, so nothing new is accepted under the key.
 */
export async function answerStoredUnderRefusedKey(request: CallerOrderRequest, ctx: IntakeContext): Promise<IntakeResult | undefined> {
  // The claim before the record: an instance of that release that takes the record over after the
  // claim is read shows in the record as a live lease (409); read the other way round, a takeover
  // between the two reads, its claim after both, was refused with 400 and then accepted.
  const claim = await ctx.store.read<OrderIntakeClaim>(request.order.orderId, orderIntakeClaimId(request.order.orderId));
  if (claim && isSameRequest(claim.document, asClaimed(request))) return { outcome: 'duplicate', response: replayed(claim.document.response) };
  const id = intakeKeyRecordId(request.idempotencyKey, request.caller);
  const record = (await ctx.store.read<IntakeKeyRecord>(id, id))?.document;
  if (record?.fingerprint === request.fingerprint && record.state === 'completed' && record.response)
    return { outcome: 'duplicate', response: replayed(record.response) };
  // Still being handled by an instance of that release, during the deploy: the client asks again.
  if (record?.fingerprint === request.fingerprint && record.state === 'in-progress' && leaseIsLive(record, ctx.now()))
    return { outcome: 'retry', response: inProgress(request) };
  return undefined;
}

/**
 * The key's record holds another request. Ours may still have been accepted: once its record ran
 * out, the key was free to be used for another order, and the claim, kept with the order, holds
 * our answer. That record is the other request's, so it is left as it is.
 */
async function reusedKeyUnlessClaimed(request: CallerOrderRequest, ctx: IntakeContext): Promise<IntakeResult> {
  const claim = await ctx.store.read<OrderIntakeClaim>(request.order.orderId, orderIntakeClaimId(request.order.orderId));
  if (claim && isSameRequest(claim.document, asClaimed(request))) return { outcome: 'duplicate', response: replayed(claim.document.response) };
  return reusedKey();
}

/**
 * The key's record: read first (a client's retry finds it in one round trip), else created now
 * `in-progress`, or, when a concurrent copy created it first (409), theirs, told apart by fingerprint.
 */
async function findOrCreateKeyRecord(
  request: CallerOrderRequest,
  keyId: string,
  owner: string,
  ctx: IntakeContext,
  readFirst: boolean,
): Promise<CreateOrClassifyResult<IntakeKeyRecord>> {
  const isSame = (record: IntakeKeyRecord): boolean => record.fingerprint === request.fingerprint;
  const existing = readFirst ? await ctx.store.read<IntakeKeyRecord>(keyId, keyId) : undefined;
  if (existing) return classifyRecord(existing, isSame);
  return createOrClassify(ctx.store, keyId, newKeyRecord(request, owner, ctx), isSame);
}

async function carryOut(request: CallerOrderRequest, key: RequestKey, ctx: IntakeContext, traceparent: string | undefined): Promise<IntakeResult> {
  const { orderId } = request.order;
  const [claimRead, orderRead] = await Promise.allSettled([
    ctx.store.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId)),
    // An order placed on the queue directly has no claim: seen here, or by the consumer's own fingerprint check.
    ctx.store.read(orderId, orderId),
  ]);
  // The claim alone decides when there is one: a failed order read beside it must not turn a decided answer into a 503.
  const claim = settledValue(claimRead);
  if (claim) return settleWithClaim(claim.document, request, key, ctx);
  if (settledValue(orderRead)) return finish(key, { outcome: 'invalid', response: orderIdTaken() }, ctx);
  const acceptedAt = ctx.now().toISOString();
  const event = orderPlacedEvent(request, acceptedAt, ctx, traceparent);
  const response = accepted(orderId, event.message.messageId, acceptedAt);
  const newClaim: OrderIntakeClaim = {
    id: orderIntakeClaimId(orderId),
    orderId,
    docType: 'intake',
    idempotencyKey: request.idempotencyKey,
    ...scopeField(request.caller),
    fingerprint: request.fingerprint,
    response,
    acceptedAt,
  };
  const result = await commitOrJudgeByClaim(newClaim, event, ctx);
  if (result === 'applied-unseen' || result.kind === 'committed') return finish(key, { outcome: 'created', response }, ctx);
  // The claim read back after a failed batch decides, as the first read's would have: reading it again could only fail.
  if (result.kind === 'claimed-by-another') return settleWithClaim(result.claim, request, key, ctx);
  // Stryker disable next-line ConditionalExpression,LogicalOperator: on any other failure there is no claim, so the read below finds none and the order-exists answer follows either way
  if (result.kind === 'already-exists' && result.operationIndex === 0) {
    const winner = await ctx.store.read<OrderIntakeClaim>(orderId, orderIntakeClaimId(orderId));
    // Stryker disable next-line ConditionalExpression: a claim has no ttl and is never deleted, so after a 409 on it the read finds it
    if (winner) return settleWithClaim(winner.document, request, key, ctx);
  }
  // An OrderPlaced entry without a claim: written by hand or by another tool. Never publish a second.
  return finish(key, { outcome: 'invalid', response: orderIdTaken() }, ctx);
}

/** A read's value, or its failure thrown: both reads were started together, and neither is left unobserved. */
function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === 'rejected') throw result.reason;
  return result.value;
}

/**
 * The OrderPlaced outbox entry. Its MessageId is the order id and the body's digest, not the order
 * id alone: a producer's OrderPlaced sent straight to the queue under the order id with another
 * body would otherwise make the broker drop this one unseen inside its duplicate detection window.
 * Both reach the consumer, whose fingerprint check records the conflict; a redelivery of either is
 * still a duplicate there (the order is its own marker, compared by fingerprint).
 */
function orderPlacedEvent(request: OrderRequest, acceptedAt: string, ctx: IntakeContext, traceparent: string | undefined): OutboxDocument {
  const { orderId } = request.order;
  return newOutboxDocument({
    id: orderPlacedOutboxId(orderId),
    orderId,
    eventType: 'OrderPlaced',
    destination: ctx.ordersQueueName,
    body: request.order,
    createdAt: acceptedAt,
    messageId: messageIdNamingBody(orderId, 'OrderPlaced', request.order),
    source: orderIntakeSource,
    traceparent,
  });
}

/**
 * The order's claim decides: another caller's is a 409 that tells no more than an order id taken
 * outside the intake would; ours (an earlier attempt's batch committed) replays; another key's of
 * ours is a 409 naming it; our key with another body (possible only once the key's record has
 * expired) is a 422.
 */
async function settleWithClaim(claim: OrderIntakeClaim, request: CallerOrderRequest, key: RequestKey, ctx: IntakeContext): Promise<IntakeResult> {
  if (claim.caller !== callerScope(request.caller)) return finish(key, { outcome: 'invalid', response: orderIdTaken() }, ctx);
  if (claim.idempotencyKey !== request.idempotencyKey) return finish(key, { outcome: 'invalid', response: orderExists(request.order.orderId) }, ctx);
  if (!isSameRequest(claim, asClaimed(request))) return finish(key, reusedKey(), ctx);
  return finish(key, { outcome: 'duplicate', response: replayed(claim.response) }, ctx);
}

/**
 * The claim batch; when the store fails to answer, the batch may have been applied all the same (a
 * timeout, a lost connection), so the claim is read back: our own claim means it was
 * ('applied-unseen'); another claim means it was refused, as a 409 on the claim would have said, and
 * that claim is returned to decide the answer;
 * none, or no answer to the read either, leaves the outcome unknown, and the error goes on to a 503
 * whose retry will find out (the claim's fixed id keeps that retry from a second event).
 */
async function commitOrJudgeByClaim(
  claim: OrderIntakeClaim,
  event: WriteOperation['document'],
  ctx: IntakeContext,
): Promise<CommitResult | 'applied-unseen' | { readonly kind: 'claimed-by-another'; readonly claim: OrderIntakeClaim }> {
  try {
    return await ctx.store.commit(claim.orderId, [create(claim), create(event)]);
  } catch (error) {
    if (!(error instanceof TransientStoreError)) throw error;
    const found = await ctx.store.read<OrderIntakeClaim>(claim.orderId, claim.id).catch((readError: unknown) => {
      if (readError instanceof TransientStoreError) return undefined;
      throw readError;
    });
    if (!found) throw error;
    if (isSameRequest(found.document, claim) && found.document.acceptedAt === claim.acceptedAt) return 'applied-unseen';
    return { kind: 'claimed-by-another', claim: found.document };
  }
}

/** The same caller, key and body: another caller's identical request is not this one. */
function isSameRequest(claim: OrderIntakeClaim, request: Pick<OrderIntakeClaim, 'idempotencyKey' | 'fingerprint' | 'caller'>): boolean {
  return claim.caller === request.caller && claim.idempotencyKey === request.idempotencyKey && claim.fingerprint === request.fingerprint;
}

/** The request as its claim would record it. */
function asClaimed(request: CallerOrderRequest): Pick<OrderIntakeClaim, 'idempotencyKey' | 'fingerprint' | 'caller'> {
  return { idempotencyKey: request.idempotencyKey, fingerprint: request.fingerprint, caller: callerScope(request.caller) };
}

/**
 * Completes the key record and answers. The answer was decided by what the store holds (a claim,
 * an order), so a store that fails now does not change it: the record stays in progress and the
 * next retry, which finds the same claim or order, completes it.
 */
async function finish(key: RequestKey, result: IntakeResult, ctx: IntakeContext): Promise<IntakeResult> {
  try {
    await completeKeyRecord(key, result.response, ctx);
  } catch (error) {
    if (!(error instanceof TransientStoreError)) throw error;
  }
  return result;
}

/**
 * Step 3, guarded by the record's etag. Whoever completes it first wins; every writer derives the
 * same response from the same claim, so a loser has nothing to correct. Only a record of this
 * request is completed: once ours ran out, another request may have created the key's record
 * again, and our answer stored there would be replayed to its retries (its own order never made).
 */
async function completeKeyRecord(key: RequestKey, response: IntakeResponse, ctx: IntakeContext): Promise<void> {
  for (let attempt = 1; attempt <= ctx.maxConcurrencyAttempts; attempt += 1) {
    const current = await ctx.store.read<IntakeKeyRecord>(key.id, key.id);
    // Gone (expired) or already completed: the claim, or the record, holds the answer already.
    if (!current || current.document.state === 'completed' || current.document.fingerprint !== key.fingerprint) return;
    const completed: IntakeKeyRecord = { ...current.document, state: 'completed', response, completedAt: ctx.now().toISOString() };
    const result = await ctx.store.commit(key.id, [replace(completed, current.etag)]);
    // Stryker disable next-line ConditionalExpression: going round again after a write that won reads the record completed (or gone) and returns, with nothing written
    if (result.kind !== 'lost-race') return;
  }
}

async function takeOver(existing: VersionedDocument<IntakeKeyRecord>, owner: string, ctx: IntakeContext): Promise<boolean> {
  const record = existing.document;
  const taken: IntakeKeyRecord = { ...record, owner, attempt: record.attempt + 1, leaseExpiresAt: leaseEnd(ctx) };
  const result = await ctx.store.commit(record.id, [replace(taken, existing.etag)]);
  return result.kind === 'committed';
}

/**
 * A request that failed before its batch (the store unavailable, say) hands the key back at once,
 * so the client's retry need not wait out the lease. Only our own live lease is ended.
 */
export async function releaseKey(idempotencyKey: string, caller: IntakeCaller, owner: string, ctx: IntakeContext): Promise<void> {
  const keyId = intakeKeyRecordId(idempotencyKey, caller);
  const current = await ctx.store.read<IntakeKeyRecord>(keyId, keyId);
  if (!current || current.document.state !== 'in-progress' || current.document.owner !== owner) return;
  const released: IntakeKeyRecord = { ...current.document, leaseExpiresAt: ctx.now().toISOString() };
  await ctx.store.commit(keyId, [replace(released, current.etag)]);
}

function newKeyRecord(request: CallerOrderRequest, owner: string, ctx: IntakeContext): IntakeKeyRecord {
  const id = intakeKeyRecordId(request.idempotencyKey, request.caller);
  return {
    id,
    orderId: id,
    docType: 'intake-key',
    idempotencyKey: request.idempotencyKey,
    ...scopeField(request.caller),
    fingerprint: request.fingerprint,
    requestOrderId: request.order.orderId,
    state: 'in-progress',
    owner,
    attempt: 1,
    leaseExpiresAt: leaseEnd(ctx),
    createdAt: ctx.now().toISOString(),
    ttl: ctx.keyRetentionSeconds,
  };
}

function leaseEnd(ctx: IntakeContext): string {
  return new Date(ctx.now().getTime() + ctx.leaseSeconds * 1000).toISOString();
}

/** The shared scope writes no caller field: its records keep the shape earlier releases wrote and read. */
function scopeField(caller: IntakeCaller): { caller?: string } {
  const scope = callerScope(caller);
  return scope === undefined ? {} : { caller: scope };
}

/**
 * Names no order: in the shared scope the key may be another caller's, and the order it was used
 * for is theirs to know.
 */
function reusedKey(): IntakeResult {
  const detail = 'this Idempotency-Key was already used with another request; retry with the body of the first request, or use a new key for a new request';
  return { outcome: 'conflict', response: problem(422, 'idempotency-key-reused', 'Idempotency-Key reused with another request', detail) };
}

function inProgress(request: OrderRequest): IntakeResponse {
  return problem(
    409,
    'request-in-progress',
    'A request with this Idempotency-Key is still being handled',
    `retry after ${inProgressRetryAfterSeconds} s with the same key and body; you will get that request's response`,
    { orderId: request.order.orderId },
    { 'Retry-After': String(inProgressRetryAfterSeconds) },
  );
}

function orderExists(orderId: string): IntakeResponse {
  return problem(409, 'order-exists', 'The order exists', `order ${orderId} was already submitted with another Idempotency-Key; it is not submitted again`, {
    orderId,
  });
}

/**
 * An order id this caller cannot use: another caller's order, or one placed on the queue directly.
 * One answer for all of them, with neither the id nor anything of the order that holds it, so it
 * tells no more than that the id is taken, which no answer can hide (order ids are global; the
 * one way not to learn even that is an unguessable order id).
 */
function orderIdTaken(): IntakeResponse {
  return problem(
    409,
    'order-exists',
    'The order id is taken',
    'an order with this order id exists and was not submitted by this caller; it is not submitted again: use a new order id for a new order',
  );
}
