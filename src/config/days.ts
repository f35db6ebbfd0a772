/** Seconds in `n` days: the retention settings are written in days, read in seconds. */
export const days = (n: number) => n * 24 * 60 * 60;
