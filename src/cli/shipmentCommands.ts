import { Option } from 'commander';
import type { Command } from 'commander';
import { replace } from '../idempotency/index.js';
import type { DocumentStore, VersionedDocument } from '../idempotency/index.js';
import { leaseIsLive, settle } from '../shipments/index.js';
import type { CarrierClient, ShipmentRecord, ShipmentState } from '../shipments/index.js';
import type { OrderDocument } from '../orders/index.js';
import { defaultListMax, listMaxOption, listStopWords } from './listBound.js';
import { scanStops } from './scanBound.js';
import type { ScanBound } from './scanBound.js';
import { cut } from './tableCell.js';
import { oneLine, shellWord } from './terminalText.js';

export interface ShipmentCommandContext {
  readonly store: DocumentStore;
  readonly now: () => number;
}

export interface ListedShipment {
  readonly orderId: string;
  readonly id: string;
  readonly state: ShipmentState;
  readonly idempotencyKey: string;
  readonly owner: string;
  readonly attempt: number;
  readonly reconcileAttempts: number;
  readonly leaseExpiresAt: string;
  readonly shipmentId?: string;
  readonly reason?: string;
}

export type ResolveAction = { readonly kind: 'record'; readonly shipmentId: string } | { readonly kind: 'retry' };

export interface ResolveReport {
  readonly orderId: string;
  readonly id?: string;
  readonly outcome: 'recorded' | 'would-record' | 'requeued' | 'would-requeue' | 'refused';
  readonly detail: string;
}

const shipmentStates = ['in-progress', 'completed', 'refused', 'escalated'] as const;

/**
 * `shipments list`: escalated records by default (each needs an operator), or those in the given
 * states, at most `bound.max` of them: `--state completed` names every order ever booked. The store
 * is asked for no more than that per state; no time of a record is indexed, so which ones are shown
 * past the bound is the store's choice, and the stop says so.
 */
export async function listShipments(
  ctx: ShipmentCommandContext,
  states: readonly ShipmentState[],
  orderId: string | undefined,
  bound: Pick<ScanBound, 'stopped'> & { readonly max: number },
): Promise<ListedShipment[]> {
  const found = await Promise.all(
    states.map((state) =>
      ctx.store.find<ShipmentRecord>({
        docType: 'shipment',
        equals: { state },
        ...(orderId === undefined ? {} : { partitionKey: orderId }),
        limit: bound.max + 1,
      }),
    ),
  );
  const all = found.flat();
  if (all.length > bound.max) bound.stopped({ what: 'shipment records', after: bound.max, unit: ' rows', order: 'in no particular order', option: '--max' });
  return all
    .slice(0, bound.max)
    .map(({ document: r }) => ({
      orderId: r.orderId,
      id: r.id,
      state: r.state,
      idempotencyKey: r.idempotencyKey,
      owner: r.owner,
      attempt: r.attempt,
      reconcileAttempts: r.reconcileAttempts,
      leaseExpiresAt: r.leaseExpiresAt,
      shipmentId: r.shipmentId,
      reason: r.escalation?.reason ?? r.refusal?.reason ?? r.lastError,
    }))
    .sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
}

/**
 * `shipments resolve <orderId>`: settles an escalated (or abandoned) booking by hand. `--shipment-id`
 * records what the operator found at the carrier, with the order, in one etag-guarded batch;
 * `--retry` hands the record back to the reconciler (rounds reset, lease expired), which looks the
 * key up before it calls. A record someone holds, or one already settled, is refused.
 */
export async function resolveShipment(ctx: ShipmentCommandContext, orderId: string, action: ResolveAction, dryRun: boolean): Promise<ResolveReport> {
  const open = (await ctx.store.find<ShipmentRecord>({ docType: 'shipment', partitionKey: orderId })).filter(
    (r) => r.document.state === 'in-progress' || r.document.state === 'escalated',
  );
  if (open.length === 0)
    return {
      orderId,
      outcome: 'refused',
      detail: 'no escalated or in-progress shipment record for this order (shipments list --state completed refused shows the settled ones)',
    };
  if (open.length > 1) return { orderId, outcome: 'refused', detail: `${open.length} open shipment records: ${open.map((r) => r.document.id).join(', ')}` };
  const stored = open[0] as VersionedDocument<ShipmentRecord>;
  const record = stored.document;
  const now = new Date(ctx.now());
  if (record.state === 'in-progress' && leaseIsLive(record, now)) {
    return {
      orderId,
      id: record.id,
      outcome: 'refused',
      detail: `${record.owner} holds it until ${record.leaseExpiresAt}: let it finish, or wait for the lease to run out`,
    };
  }
  // The order may hold a shipment booked under another record (another OrderAccepted key): recording
  // another id would replace it on the order, a retry would book a second shipment at the carrier.
  const held = (await ctx.store.read<OrderDocument>(orderId, orderId))?.document.shipmentId;
  if (held !== undefined && !(action.kind === 'record' && action.shipmentId === held)) {
    return {
      orderId,
      id: record.id,
      outcome: 'refused',
      detail: `the order already holds shipment ${held} (shipments list --order ${orderId} --state completed): ${action.kind === 'retry' ? 'a retry would book a second one' : `recording ${action.shipmentId} would replace it`}`,
    };
  }
  if (action.kind === 'retry') {
    if (dryRun) return { orderId, id: record.id, outcome: 'would-requeue', detail: `was ${record.state} after ${record.reconcileAttempts} round(s)` };
    // A fresh start: no rounds, and the transient budget runs again from the next round without an answer.
    const { escalation: _escalation, carrierUnreachableSince: _since, reconcileAttemptsAgainst: _against, ...rest } = record;
    const requeued: ShipmentRecord = {
      ...rest,
      state: 'in-progress',
      reconcileAttempts: 0,
      owner: 'operator',
      leaseExpiresAt: now.toISOString(),
      updatedAt: now.toISOString(),
    };
    const result = await ctx.store.commit(orderId, [replace(requeued, stored.etag)]);
    if (result.kind !== 'committed') return { orderId, id: record.id, outcome: 'refused', detail: 'changed while we looked: list again' };
    return {
      orderId,
      id: record.id,
      outcome: 'requeued',
      detail: 'the reconciler looks the key up at its next run, and books under the same key only if the carrier has nothing',
    };
  }
  if (dryRun) return { orderId, id: record.id, outcome: 'would-record', detail: `${action.shipmentId} on the record and the order` };
  const answer = {
    kind: 'booked' as const,
    shipmentId: action.shipmentId,
    answer: { status: 200, body: { shipmentId: action.shipmentId, recordedBy: 'operator' } },
  };
  const settled = await settle(stored, answer, 'operator', { store: ctx.store, carrier: noCarrier, now: () => now, leaseMs: 0, maxConcurrencyAttempts: 5 });
  if (settled === 'lost-race') return { orderId, id: record.id, outcome: 'refused', detail: 'changed while we looked: list again' };
  if (settled.outcome.kind !== 'created')
    return { orderId, id: record.id, outcome: 'refused', detail: settled.outcome.kind === 'retry' ? settled.outcome.reason : settled.outcome.kind };
  return { orderId, id: record.id, outcome: 'recorded', detail: `${action.shipmentId} on the record and the order` };
}

// Settling by hand calls nobody.
const noCarrier: CarrierClient = {
  book: () => Promise.reject(new Error('an operator resolution does not call the carrier')),
  lookup: () => Promise.reject(new Error('an operator resolution does not call the carrier')),
};

type WithStore = (run: (ctx: ShipmentCommandContext) => Promise<void>) => Promise<void>;

/** `dlq shipments ...`: bookings the reconciler could not settle, kept in Cosmos DB. */
export function addShipmentCommands(
  program: Command,
  io: { stdout(line: string): void; stderr(line: string): void },
  setExitCode: (code: number) => void,
  withStore: WithStore,
): void {
  const shipments = program.command('shipments').description('carrier bookings the reconciler escalated (or that are still in progress)');
  shipments
    .command('list')
    .description('escalated records (or those in --state), by order')
    .option('--order <orderId>', "only this order's records")
    .addOption(new Option('--state <state...>', 'these states instead of escalated').choices(shipmentStates))
    .addOption(listMaxOption('records (the store is asked for no more)'))
    .option('--json', 'print JSON for scripts')
    .action(async (options: { order?: string; state?: ShipmentState[]; max?: number; json?: boolean }) => {
      const { truncated, stopped } = scanStops(io.stderr, ...listStopWords);
      await withStore(async (ctx) => {
        const rows = await listShipments(ctx, options.state ?? ['escalated'], options.order, { max: options.max ?? defaultListMax, stopped });
        io.stdout(options.json ? JSON.stringify({ records: rows, truncated }, null, 2) : shipmentTable(rows));
      });
      setExitCode(truncated.length > 0 ? 1 : 0);
    });
  shipments
    .command('resolve <orderId>')
    .description("settle an order's escalated booking: --shipment-id records what you found at the carrier; --retry hands it back to the reconciler")
    .option('--shipment-id <id>', "the carrier's shipment id for this order's booking")
    .option('--retry', 'reset the rounds and let the reconciler look the key up (and book under it if the carrier has nothing)')
    .option('--dry-run', 'show the plan and change nothing')
    .option('--json', 'print the report as JSON')
    .action(async (orderId: string, options: { shipmentId?: string; retry?: boolean; dryRun?: boolean; json?: boolean }) => {
      if ((options.shipmentId === undefined) === (options.retry !== true)) throw new Error('give exactly one of --shipment-id <id> or --retry');
      if (options.shipmentId !== undefined && options.shipmentId.trim() === '') throw new Error('--shipment-id is empty');
      const action: ResolveAction = options.shipmentId !== undefined ? { kind: 'record', shipmentId: options.shipmentId.trim() } : { kind: 'retry' };
      await withStore(async (ctx) => {
        const report = await resolveShipment(ctx, orderId, action, options.dryRun === true);
        io.stdout(options.json ? JSON.stringify(report, null, 2) : shipmentReportLine(report));
        setExitCode(report.outcome === 'refused' ? 1 : 0);
      });
    });
}

/** The line of a resolve report. */
export function shipmentReportLine(report: ResolveReport): string {
  return `${shellWord(`${report.orderId}${report.id ? `/${report.id}` : ''}`)}  ${report.outcome}  ${oneLine(report.detail)}`;
}

export function shipmentTable(rows: readonly ListedShipment[]): string {
  const header = `${cut('ORDER', 24)}  ${cut('STATE', 11)}  ${cut('SHIPMENT', 14)}  ${cut('ROUNDS', 6)}  ${cut('LEASE UNTIL', 20)}  REASON`;
  const lines = rows.map(
    (r) =>
      `${cut(r.orderId, 24)}  ${cut(r.state, 11)}  ${cut(r.shipmentId ?? '', 14)}  ${cut(String(r.reconcileAttempts), 6)}  ${cut(r.leaseExpiresAt.slice(0, 19), 20)}  ${oneLine(r.reason ?? '')}`,
  );
  return [header, ...lines, `${rows.length} shipment record(s)`].join('\n');
}
