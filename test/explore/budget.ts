/**
 * What `npm test` spends on exploration: a fixed seed and a bounded number of runs per property,
 * each well under 30 s on the 2-core CI machine. `npm run explore` takes its own runs and seeds.
 */
export const explorationBudget = {
  'order-flows': { seed: 20_261_203, numRuns: 600 },
  /** The reintroduced defect of 24649c0. The defect checks stop at the first counterexample, unshrunk. */
  'order-flows/stranded-parked-item': { seed: 20_261_203, numRuns: 400, endOnFailure: true },
  /** The defect the exploration found in src/orders/rejections.ts (KnownDefects.conflictCopyUnrecorded), with its tolerance off. */
  'order-flows/conflict-copy-unrecorded': { seed: 20_261_203, numRuns: 1000, endOnFailure: true },
  /**
   * KnownDefects.rejectionErasedByHandBack, found once in 32,940 runs (npm run explore, seed
   * 6424260): too rare for a random search in CI, so its shrunk counterexample is replayed by seed and
   * path. The path is tied to the generators: if they change, find it again with
   * `npm run explore -- --property order-flows/rejection-erased-by-hand-back --runs 100000` and record the new one.
   */
  'order-flows/rejection-erased-by-hand-back': { seed: 6_424_260, path: '2939:2:4:3:5:5:9:9', numRuns: 1 },
  timeoutMs: 60_000,
} as const;
