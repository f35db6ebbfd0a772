/** The closing line of a report: each outcome with its count, and the named targets not found. */
export function summaryLine(reports: readonly { readonly outcome: string }[], nothing: string, missing: number, missingNoun: string): string {
  const counts = Object.entries(reports.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.outcome]: (acc[r.outcome] ?? 0) + 1 }), {}));
  return `${counts.map(([k, v]) => `${k} ${v}`).join(', ') || nothing}${missing > 0 ? `; ${missing} named ${missingNoun} not found` : ''}`;
}
