/**
 * `--timeout` as the operator means it: each call to Service Bus or Cosmos DB answers within it, its
 * SDK's own retries included, or the run gives that source up and asks it nothing more (one silent
 * source costs one timeout, not one per call). The call itself is abandoned, not cancelled: the
 * DocumentStore port takes no abort signal.
 */
export class NoAnswerError extends Error {
  override readonly name = 'NoAnswerError';
  constructor(
    readonly source: string,
    readonly timeoutMs: number,
  ) {
    super(`no answer from ${source} within ${formatSeconds(timeoutMs)}`);
  }
}

export type Sleeper = (ms: number) => Promise<void>;

/** A timer that does not keep the process alive once the tool is done. */
export const unrefSleep: Sleeper = (ms) => new Promise((wake) => setTimeout(wake, ms).unref());

export interface AnswerDeadline {
  /** The call's answer, or NoAnswerError when it took longer than the timeout or its source had already been given up. */
  readonly within: <T>(source: string, call: () => Promise<T>) => Promise<T>;
  /** Waits for a call (a close) at most the timeout, whatever it answers. */
  readonly settle: (call: () => Promise<unknown>) => Promise<void>;
  /** The sources given up, in the order they fell silent. */
  readonly silent: () => readonly string[];
}

export function answerDeadline(timeoutMs: number, sleep: Sleeper = unrefSleep): AnswerDeadline {
  const silent: string[] = [];
  const within = async <T>(source: string, call: () => Promise<T>): Promise<T> => {
    if (silent.includes(source)) throw new NoAnswerError(source, timeoutMs);
    const answer = await Promise.race([call().then((value) => ({ value })), sleep(timeoutMs).then(() => undefined)]);
    if (answer) return answer.value;
    if (!silent.includes(source)) silent.push(source);
    throw new NoAnswerError(source, timeoutMs);
  };
  const settle = async (call: () => Promise<unknown>) => {
    await Promise.race([call().catch(() => undefined), sleep(timeoutMs)]);
  };
  return { within, settle, silent: () => [...silent] };
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10}s`;
}
