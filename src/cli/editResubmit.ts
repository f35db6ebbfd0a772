import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceBusMessage, ServiceBusReceivedMessage, ServiceBusReceiver } from '@azure/service-bus';
import { PermanentMessageError } from '../idempotency/index.js';
import { idempotencyKeyProperty, parseOrderMessage } from '../orders/index.js';
import { decodeJsonBody } from '../servicebus/index.js';
import type { MessageEnvelope } from '../servicebus/index.js';
import { bodyForTool } from './bodyView.js';
import { forEachLocked, peekAll } from './deadLetterQueue.js';
import type { DlqContext } from './dlqCommands.js';
import { routeEditedCopy } from './editRouting.js';
import { envelopeOfReceived } from './receivedEnvelope.js';
import { parkedUnderKey } from './parkedUnderKey.js';
import { isOtherSpelling } from './resubmitCopy.js';
import { maxMessagesLookedAt, othersUnderKey, toolKeyOf } from './sameKeyMessages.js';
import { storeStateOf } from './storeState.js';
import { orderIdOfBody } from './traceTimeline.js';
import type { StoreState } from './storeState.js';

/** The largest edited body the tool reads (the Standard tier's message size). */
export const maxEditedBodyBytes = 256 * 1024;
export const editedFromProperty = 'edited-from';
export const editCountProperty = 'edit-count';

export type EditDecision =
  { readonly kind: 'send'; readonly copy: ServiceBusMessage; readonly detail: string } | { readonly kind: 'refused'; readonly detail: string };

/**
 * An edited copy travels under a key of its own, `<original key>~edit-<n>`, recording the original's
 * in `edited-from`: the consumer treats it as a new message, so it must not repeat an effect the
 * original already had. So: refused unless the store shows the original's effect absent
 * (`not-processed`, or `invalid`: it never applied), and unless the edited body is a valid message.
 */
export function decideEdit(original: ServiceBusReceivedMessage, editedBody: unknown, originalState: StoreState, consumerName?: string): EditDecision {
  const envelope = envelopeOfReceived(original);
  // Without the consumer's prefix: the copy's idempotency-key is read by the consumer, which adds it.
  const originalKey = toolKeyOf(original);
  if (originalKey === undefined) return { kind: 'refused', detail: 'the original has no dedup key to record the edit against' };
  if (originalState.kind === 'processed' || originalState.kind === 'conflict') {
    return {
      kind: 'refused',
      detail: `the original's key already has an effect (${originalState.kind}: ${originalState.detail}): an edited copy under a new key would add a second one. Leave it, or correct the stored state first`,
    };
  }
  if (originalState.kind === 'unchecked')
    return { kind: 'refused', detail: 'an edit is sent only when the store shows the original never applied: give --cosmos-endpoint' };
  const { root, count } = editLineage(original.applicationProperties ?? {}, originalKey);
  const n = count + 1;
  const key = `${root}~edit-${n}`;
  const written = [idempotencyKeyProperty, editedFromProperty, editCountProperty];
  const kept = Object.fromEntries(Object.entries(original.applicationProperties ?? {}).filter(([name]) => !isOtherSpelling(name, written)));
  const applicationProperties = { ...kept, [idempotencyKeyProperty]: key, [editedFromProperty]: root, [editCountProperty]: n };
  const copyEnvelope: MessageEnvelope = { ...envelope, messageId: key, applicationProperties };
  try {
    parseOrderMessage(copyEnvelope, editedBody, { consumerName, maxMessageBytes: maxEditedBodyBytes });
  } catch (error) {
    if (error instanceof PermanentMessageError) return { kind: 'refused', detail: `the edited body is not a valid message: ${error.message}` };
    throw error;
  }
  const copy: ServiceBusMessage = {
    body: editedBody,
    messageId: key,
    contentType: original.contentType ?? 'application/json',
    subject: original.subject,
    correlationId: original.correlationId,
    sessionId: original.sessionId,
    applicationProperties,
  };
  return { kind: 'send', copy, detail: `sent as ${key}, edited from ${root} (the original's effect was ${originalState.kind}: ${originalState.detail})` };
}

/**
 * The first original and how many edits lie between it and this message. `edited-from` and
 * `edit-count` are a sender's claim unless they lead to the message's own key (`<root>~edit-<count>`,
 * as the tool wrote them): otherwise the message is an original, so an edit is keyed by its key.
 */
function editLineage(props: Readonly<Record<string, unknown>>, originalKey: string): { root: string; count: number } {
  const root = props[editedFromProperty];
  const count = props[editCountProperty];
  if (typeof root === 'string' && Number.isInteger(count) && (count as number) > 0 && `${root}~edit-${String(count)}` === originalKey)
    return { root, count: count as number };
  return { root: originalKey, count: 0 };
}

/**
 * For an edit of an edit: why the first original's key forbids another one, or undefined. The edits
 * stand for the request the first original made: once its key has an effect (a producer's re-send
 * under it, applied after the first edit was sent), a further edit under a new key would add a
 * second. The root is looked up as the consumer would key it, without the MessageId, so the record
 * of a rejection by MessageId does not hide its effect.
 */
async function rootApplied(ctx: DlqContext, found: ServiceBusReceivedMessage, key: string): Promise<string | undefined> {
  const { root } = editLineage(found.applicationProperties ?? {}, key);
  if (root === key) return undefined;
  const envelope = envelopeOfReceived(found);
  const properties = Object.fromEntries(Object.entries(envelope.applicationProperties).filter(([name]) => !isOtherSpelling(name, [idempotencyKeyProperty])));
  const asRoot: MessageEnvelope = { ...envelope, messageId: undefined, applicationProperties: { ...properties, [idempotencyKeyProperty]: root } };
  const state = await storeStateOf(asRoot, found.body, { store: ctx.store, consumerName: ctx.consumerName });
  if (state.kind !== 'processed' && state.kind !== 'conflict') return undefined;
  return `the first original's key ${JSON.stringify(root)}, which this edit stands for, already has an effect (${state.kind}: ${state.detail}): another edit under a new key would add a second one. Leave it, or correct the stored state first`;
}

/** Reads `--body-file`, bounded, as JSON. */
export async function readEditedBody(path: string): Promise<unknown> {
  const size = (await stat(path)).size;
  if (size > maxEditedBodyBytes) throw new Error(`--body-file ${path} is ${size} bytes, more than ${maxEditedBodyBytes}`);
  return parseEdited(await readFile(path, 'utf8'), path);
}

/** Opens the body in `$EDITOR` (or `$VISUAL`) and reads what was saved. */
export async function editInEditor(body: unknown, env: Readonly<Record<string, string | undefined>>): Promise<unknown> {
  const editor = env.VISUAL ?? env.EDITOR;
  if (!editor) throw new Error('--edit opens $EDITOR (or $VISUAL), and neither is set: set one, or give --body-file <file>');
  const dir = await mkdtemp(join(tmpdir(), 'orders-ops-edit-'));
  const file = join(dir, 'body.json');
  try {
    await writeFile(file, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
    const result = spawnSync(editor, [file], { stdio: 'inherit', shell: true });
    if (result.status !== 0) throw new Error(`${editor} ended with exit code ${String(result.status)}: nothing sent`);
    return await readEditedBody(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function parseEdited(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${where} is not JSON: ${(error as Error).message}`);
  }
}

export interface EditReport {
  readonly sequenceNumber: number;
  readonly messageId?: string;
  readonly outcome: 'resubmitted' | 'would-resubmit' | 'refused' | 'failed';
  readonly copyMessageId?: string;
  readonly detail: string;
}

/**
 * `resubmit <target> --edit | --body-file`: the body is edited while nothing is locked (an editor
 * takes minutes), checked against the store, then the original is locked, the copy sent, and only
 * then the original removed.
 */
export async function editAndResubmit(
  ctx: DlqContext,
  target: string,
  edit: (body: unknown) => Promise<unknown>,
  dryRun = false,
): Promise<EditReport | undefined> {
  const found = await findTarget(ctx.receiver, target);
  if (!found) return undefined;
  const base = { sequenceNumber: found.sequenceNumber?.toNumber() ?? 0, messageId: found.messageId === undefined ? undefined : String(found.messageId) };
  const edited = await edit(found.body);
  const key = toolKeyOf(found);
  // Looked for before the store is read: a copy that is processed meanwhile has its effect stored
  // before it leaves the queue, so it is seen in one place or the other.
  // An edit of an edit stands for the first original's request: a message under that key counts too.
  const keys = key === undefined ? undefined : [...new Set([key, editLineage(found.applicationProperties ?? {}, key).root])];
  const others = keys === undefined ? undefined : await othersUnderKey(ctx, keys, String(found.sequenceNumber));
  if (others !== undefined) return { ...base, outcome: 'refused', detail: others };
  const state = await storeStateOf(envelopeOfReceived(found), found.body, { store: ctx.store, consumerName: ctx.consumerName });
  const decision = decideEdit(found, edited, state, ctx.consumerName);
  if (decision.kind === 'refused') return { ...base, outcome: 'refused', detail: decision.detail };
  const root = key === undefined ? undefined : await rootApplied(ctx, found, key);
  if (root !== undefined) return { ...base, outcome: 'refused', detail: root };
  // decideEdit sends only with a store and a key, and only a valid edited body (so it has an order id).
  const envelope = envelopeOfReceived(found);
  const orderIds = [orderIdOf(envelope, bodyForTool(found)), orderIdOf(envelope, edited)];
  const parked = ctx.store && key && (await parkedUnderKey(ctx.store, key, orderIds, ctx.consumerName));
  if (parked) return { ...base, outcome: 'refused', detail: parked };
  // A subscription's edit is sent to the topic: addressed to that subscription alone, or not at all.
  const routed = routeEditedCopy(ctx, decision.copy);
  if (routed.kind === 'refused') return { ...base, outcome: 'refused', detail: routed.why };
  const { copy } = routed;
  const detail = `${decision.detail}${routed.detail}`;
  if (dryRun) return { ...base, outcome: 'would-resubmit', copyMessageId: String(copy.messageId), detail };
  const sequenceNumber = String(found.sequenceNumber);
  let report: EditReport = { ...base, outcome: 'failed', detail: 'the original was no longer in the dead-letter queue: nothing sent' };
  const sender = ctx.sender();
  try {
    await forEachLocked(
      ctx.receiver,
      async (m) => {
        if (String(m.sequenceNumber) !== sequenceNumber) return 'declined';
        await sender.sendMessages(copy);
        await ctx.receiver.completeMessage(m);
        report = { ...base, outcome: 'resubmitted', copyMessageId: String(copy.messageId), detail };
        return 'handled';
      },
      () => report.outcome === 'resubmitted',
      // It was among the first that many when it was found; past them, it is no longer there.
      { scanMax: maxMessagesLookedAt },
    );
  } finally {
    await sender.close();
  }
  return report;
}

/** The order a body names: as the consumer parses it, else the decoded body's top-level `orderId` (a body the schema refuses may still name its order). */
function orderIdOf(envelope: MessageEnvelope, body: unknown): string | undefined {
  try {
    return parseOrderMessage(envelope, body, { maxMessageBytes: Number.MAX_SAFE_INTEGER }).payload.orderId;
  } catch (error) {
    if (!(error instanceof PermanentMessageError)) throw error;
  }
  try {
    return orderIdOfBody(decodeJsonBody(body, Number.MAX_SAFE_INTEGER));
  } catch (error) {
    if (error instanceof PermanentMessageError) return undefined;
    throw error;
  }
}

/** The first dead letter with that sequence number or MessageId, among the first `maxMessagesLookedAt` (the looks' bound too); read no further once found. */
async function findTarget(receiver: ServiceBusReceiver, target: string): Promise<ServiceBusReceivedMessage | undefined> {
  let read = 0;
  for await (const m of peekAll(receiver)) {
    if (String(m.sequenceNumber) === target || m.messageId === target) return m;
    read += 1;
    if (read >= maxMessagesLookedAt) return undefined;
  }
  return undefined;
}
