/** `ok`, or what is absent, or what is there but not as the app needs it. */
export type CheckStatus = 'ok' | 'MISSING' | 'WRONG';

export interface CheckResult {
  readonly status: CheckStatus;
  /** The resource: `queue 'orders'`, `container 'leases'`. */
  readonly subject: string;
  /** What was checked: `lock duration`, `partition key`. */
  readonly property: string;
  readonly expected: string;
  readonly found: string;
  /** What to do about it, when it is not ok (and what cannot be changed after creation). */
  readonly fix?: string;
}

/** One check of one property: ok when `isOk`, else WRONG with the fix. */
export function compare(subject: string, property: string, expected: string, found: string, isOk: boolean, fix: string): CheckResult {
  return isOk ? { status: 'ok', subject, property, expected, found } : { status: 'WRONG', subject, property, expected, found, fix };
}

export function missing(subject: string, expected: string, fix: string): CheckResult {
  return { status: 'MISSING', subject, property: 'exists', expected, found: 'nothing', fix };
}

/** One line a check: `ok`, `MISSING` or `WRONG`, the subject and property, what is expected and what was found. */
export function formatCheckLine(r: CheckResult): string {
  if (r.status === 'ok') return `${r.status.padEnd(7)} ${r.subject} ${r.property}: ${r.found}`;
  return `${r.status.padEnd(7)} ${r.subject} ${r.property}: expected ${r.expected}, found ${r.found}${r.fix ? ` (${r.fix})` : ''}`;
}

/** 0 when every check is ok, 1 when anything is missing or wrong. */
export function exitCodeOf(results: readonly CheckResult[]): 0 | 1 {
  return results.every((r) => r.status === 'ok') ? 0 : 1;
}
