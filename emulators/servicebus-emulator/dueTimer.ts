import { MinHeap } from '../emulator-kit/minHeap.js';

interface Due {
  readonly atMs: number;
  readonly sequenceNumber: number;
}

/**
 * Messages that become due at a time (expiry, scheduled enqueue), earliest first, with one timer
 * armed for the earliest: O(log n) per message instead of a scan per tick.
 */
export class DueTimer {
  private readonly heap = new MinHeap<Due>((a, b) => a.atMs < b.atMs);
  private timer?: NodeJS.Timeout;

  constructor(private readonly onDue: (sequenceNumber: number, nowMs: number) => void) {}

  add(atMs: number, sequenceNumber: number): void {
    this.heap.push({ atMs, sequenceNumber });
    this.arm();
  }

  /** Hands every entry that is due to `onDue`, then re-arms the timer for the next. */
  runDue(nowMs = Date.now()): void {
    for (let next = this.heap.peek(); next && next.atMs <= nowMs; next = this.heap.peek()) {
      this.heap.pop();
      this.onDue(next.sequenceNumber, nowMs);
    }
    this.arm();
  }

  close(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    const next = this.heap.peek();
    if (!next) return;
    // setTimeout holds at most 2^31-1 ms; a later entry re-arms when this one fires.
    this.timer = setTimeout(() => this.runDue(), Math.max(0, Math.min(next.atMs - Date.now(), 2 ** 31 - 1)));
    this.timer.unref();
  }
}
