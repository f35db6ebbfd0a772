/** Types for tools/mutation/scores.cjs, for the test that pins the bar. */
export interface MutantStatus {
  readonly status: string;
}
export interface MutationReport {
  readonly files: Readonly<Record<string, { readonly mutants: readonly MutantStatus[] }>>;
}
export function check(report: MutationReport): { lines: string[]; failures: string[] };
export const folderBar: number;
export const fileBar: number;
