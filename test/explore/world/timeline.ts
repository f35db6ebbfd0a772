/**
 * What happened in one run, in the order it happened: who (an invocation, the sweeper, the world)
 * did what, and what the store answered. Printed with a counterexample, so a failure reads as a
 * story rather than as a scheduler's task ids.
 */
export class Timeline {
  private readonly events: string[] = [];
  /** How often each kind of move happened: what a run (and a whole check) explored. */
  readonly moves = new Map<string, number>();

  constructor(
    private readonly clockMs: () => number,
    private readonly startMs: number,
  ) {}

  add(who: string, what: string): void {
    const seconds = Math.round((this.clockMs() - this.startMs) / 1000);
    this.events.push(`${String(this.events.length + 1).padStart(3)}. [t+${seconds}s] ${who}: ${what}`);
  }

  /** Counts a move of the world's (a lost answer, a crash, a lost race) for the coverage tally. */
  count(move: string): void {
    this.moves.set(move, (this.moves.get(move) ?? 0) + 1);
  }

  get length(): number {
    return this.events.length;
  }

  toString(): string {
    return this.events.join('\n');
  }
}
