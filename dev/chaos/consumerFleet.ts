import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The environment variable that gives each consumer process the fleet's shared timer-lease directory. */
export const timerLeaseDirectoryVariable = 'CHAOS_TIMER_LEASE_DIRECTORY';
/** JSON of the Cosmos DB trigger's intervals (poll delay, lease acquire, renew, expiration) for the fleet. */
export const cosmosTriggerIntervalsVariable = 'CHAOS_COSMOS_TRIGGER_INTERVALS';

export interface FleetTally {
  deliveries: number;
  kills: number;
  restarts: number;
  readonly outcomes: Record<string, number>;
  /** requestShipment's deliveries, apart from processOrder's. */
  shipmentDeliveries: number;
  readonly shipmentOutcomes: Record<string, number>;
}

/**
 * N consumer processes competing for one queue. `kill()` SIGKILLs one at random (no clean-up, no
 * settlement: its locks run out on the broker) and starts a replacement.
 */
export class ConsumerFleet {
  readonly tally: FleetTally = { deliveries: 0, kills: 0, restarts: 0, outcomes: {}, shipmentDeliveries: 0, shipmentOutcomes: {} };
  /**
   * Called with each delivery's line as it arrives. `at` is when the consumer process finished it (the
   * same machine's clock): the flood run times its valid orders by it, not by when this busy process
   * (it hosts the broker and the store too) gets round to reading the line.
   */
  onDelivery?: (delivery: { readonly fn?: string; readonly messageId?: string; readonly outcome: string; readonly at?: number }) => void;
  /** Consumer processes that have said they are up (one line each at start-up, restarts included). */
  ready = 0;
  private readonly children: ChildProcess[] = [];
  private stopped = false;

  constructor(
    private readonly size: number,
    private readonly env: NodeJS.ProcessEnv,
    private readonly random: () => number,
  ) {}

  start(): void {
    for (let i = 0; i < this.size; i += 1) this.children.push(this.spawnOne());
  }

  kill(): void {
    if (this.stopped || this.children.length === 0) return;
    const index = Math.floor(this.random() * this.children.length);
    const [victim] = this.children.splice(index, 1);
    victim?.kill('SIGKILL');
    this.tally.kills += 1;
    this.children.push(this.spawnOne());
    this.tally.restarts += 1;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      this.children.splice(0).map(
        (child) =>
          new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }

  private spawnOne(): ChildProcess {
    // node itself with tsx as a loader: the `tsx` command is a wrapper process, and a SIGKILL to it
    // would leave the real consumer running.
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'consumerProcess.ts')], { env: this.env, stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(line));
    return child;
  }

  private onLine(line: string): void {
    if (line.startsWith('{"chaos":"ready"')) this.ready += 1;
    if (!line.startsWith('{"chaos":"delivery"')) return;
    const { outcome, fn, messageId, at } = JSON.parse(line) as { outcome: string; fn?: string; messageId?: string; at?: number };
    this.onDelivery?.({ fn, messageId, outcome, at });
    if (fn === 'requestShipment') {
      this.tally.shipmentDeliveries += 1;
      this.tally.shipmentOutcomes[outcome] = (this.tally.shipmentOutcomes[outcome] ?? 0) + 1;
      return;
    }
    this.tally.deliveries += 1;
    this.tally.outcomes[outcome] = (this.tally.outcomes[outcome] ?? 0) + 1;
  }
}
