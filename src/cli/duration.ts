/** `90s`, `15m`, `2h`, `7d` as milliseconds (the CLI's durations); a clear error for anything else. */
export function parseDuration(text: string): number {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a duration such as 90s, 15m, 2h or 7d`);
  const unitMs = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unitMs;
}
