import { intakeKeyRecordId, orderIntakeClaimId, orderPlacedOutboxId } from '../../../src/intake/index.js';
import type { IntakeKeyRecord, OrderIntakeClaim } from '../../../src/intake/index.js';
import type { OutboxDocument } from '../../../src/outbox/index.js';
import { intakeBodies } from './intakeScenario.js';
import { asksForRetry, describeResponse, problemCode } from './intakeWorld.js';
import type { ClientRecord, IntakeRun } from './intakeWorld.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What must hold once every client has its final answer:
 * - no invocation answers 503 ("no answer yet") once the store applied its own claim batch or
 *   showed it its request's claim: it knew the order was accepted;
 * - every 202 is the claim's stored answer, to the byte of its body, for the claim's key and body;
 * - per key, the body its record holds gets the accepted answer (or "order exists" when another
 *   key holds the order), any other body a 422, never a 202 (where records may run out, that is
 *   left unchecked: a key is free again once its record has run out);
 * - an attempt started once its request's claim was applied answers that 202, or asks to retry;
 * - each claimed order has exactly one OrderPlaced outbox entry, under the MessageId the 202 names,
 *   and an order without a claim has none.
 */
export function checkIntakeAtQuiescence(run: IntakeRun): string[] {
  const violations = run.stuck.map((name) => `${name} never finished: waiting on nothing`);
  const claimOf = (orderId: string) => run.memory.list(orderId).find((d) => d.id === orderIntakeClaimId(orderId)) as OrderIntakeClaim | undefined;
  const recordOf = (key: string) => run.memory.list(intakeKeyRecordId(key)).find((d) => d.id === intakeKeyRecordId(key)) as IntakeKeyRecord | undefined;

  for (const orderId of new Set(Object.values(intakeBodies).map((b) => b.orderId))) {
    const claim = claimOf(orderId);
    const entries = run.memory.list(orderId).filter((d) => (d as OutboxDocument).docType === 'outbox') as OutboxDocument[];
    if (entries.length !== (claim ? 1 : 0))
      violations.push(`${orderId} has ${claim ? 'a claim' : 'no claim'} and ${entries.length} OrderPlaced outbox entries`);
    const messageId = (claim?.response.body as { messageId?: string } | undefined)?.messageId;
    if (claim && entries[0] && (entries[0].id !== orderPlacedOutboxId(orderId) || entries[0].message.messageId !== messageId)) {
      violations.push(`${orderId}'s outbox entry ${entries[0].id} sends ${entries[0].message.messageId}; its 202 names ${messageId}`);
    }
  }

  for (const client of run.clients) {
    const orderId = intakeBodies[client.plan.body].orderId;
    const claimedBefore = run.memory.claimAppliedAt.get(orderId);
    violations.push(...checkClient(client, claimOf(orderId), run.keysExpire ? 'expired' : recordOf(client.plan.key), claimedBefore));
  }
  return violations;
}

/**
 * `record` is the key's record at quiescence; 'expired' when records may have run out, so that the
 * record left need not be the one the client's requests met (nor the answers it heard before it ran
 * out): then only the answers of attempts started once the client's own claim was applied are known.
 * `claimApplied` is the store's commit count when the order's claim batch was applied.
 */
function checkClient(
  client: ClientRecord,
  claim: OrderIntakeClaim | undefined,
  record: IntakeKeyRecord | undefined | 'expired',
  claimApplied: number | undefined,
): string[] {
  const { plan } = client;
  const violations: string[] = [];
  const ours = claim !== undefined && claim.idempotencyKey === plan.key && claim.fingerprint === client.fingerprint;
  for (const attempt of client.attempts) {
    const response = attempt.response;
    if (!response) continue;
    if (response.status === 503 && ((attempt.ownClaimApplied && !attempt.readBackRefused) || attempt.sawOwnClaim)) {
      violations.push(
        `${attempt.name} answered 503 (no answer yet), though ${attempt.ownClaimApplied ? 'its own claim batch was applied' : "it read its request's claim"}: the order was accepted`,
      );
    }
    if (response.status === 202 && !ours)
      violations.push(
        `${attempt.name} (${plan.key}, body ${plan.body}) answered 202, but the order's claim is ${claim ? `${claim.idempotencyKey}'s with another request` : 'missing'}`,
      );
    if (response.status === 202 && ours && !same(response.body, claim.response.body))
      violations.push(`${attempt.name} answered ${describeResponse(response)}; the stored answer is ${describeResponse(claim.response)}`);
    // Started with its request's claim in the store: whatever became of the key's record, the claim holds the answer.
    if (ours && claimApplied !== undefined && claimApplied <= attempt.startedAfterCommits && response.status !== 202 && !asksForRetry(response))
      violations.push(`${attempt.name} started after its request's claim was applied, and answered ${describeResponse(response)}, not its 202`);
  }
  const final = client.heard;
  if (!final || asksForRetry(final))
    return [
      ...violations,
      `${plan.client} (${plan.key}, body ${plan.body}) has no final answer after ${client.attempts.length} attempts (last heard: ${final ? describeResponse(final) : 'nothing'})`,
    ];
  if (record === 'expired') return violations;
  const expected = !record
    ? 'its key recorded'
    : record.fingerprint !== client.fingerprint
      ? '422 idempotency-key-reused'
      : ours
        ? '202'
        : claim
          ? '409 order-exists'
          : 'its order claimed';
  const got = final.status === 202 ? '202' : `${final.status} ${problemCode(final) ?? ''}`;
  if (got !== expected) violations.push(`${plan.client} (${plan.key}, body ${plan.body}) ends with ${describeResponse(final)}; expected ${expected}`);
  return violations;
}
