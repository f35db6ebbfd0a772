/**
 * Runs `task` on every item, at most `limit` at once (the next starts as one ends), and answers once
 * every one has settled, each outcome at its item's index. Nothing is abandoned mid-flight: a
 * caller that throws after it knows that no task of its own is still writing.
 */
export async function settleBounded<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError(`a concurrency limit must be a positive integer, not ${limit}`);
  const outcomes = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next;
      next += 1;
      try {
        outcomes[i] = { status: 'fulfilled', value: await task(items[i] as T) };
      } catch (reason) {
        outcomes[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return outcomes;
}
