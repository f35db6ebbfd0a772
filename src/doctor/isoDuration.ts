const pattern = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * Seconds of an ISO 8601 duration as Service Bus writes them (`PT1M`, `P14D`, `PT1M30.5S`, and
 * `P10675199DT2H48M5.4775807S` for "never"). Undefined for anything else: a caller reports it as
 * found, never guesses.
 */
export function secondsOfIsoDuration(duration: string): number | undefined {
  const match = pattern.exec(duration.trim());
  if (!match || duration.trim() === 'P' || duration.trim().endsWith('T')) return undefined;
  const [days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number];
  return days * 86_400 + hours * 3_600 + minutes * 60 + seconds;
}

/** Seconds as people read them: 60 -> "60 s", 1209600 -> "1209600 s (14 d)". */
export function describeSeconds(seconds: number): string {
  if (seconds >= 86_400 && seconds % 86_400 === 0) return `${seconds} s (${seconds / 86_400} d)`;
  if (seconds >= 3_600 && seconds % 3_600 === 0) return `${seconds} s (${seconds / 3_600} h)`;
  return `${seconds} s`;
}
