import { createInterface } from 'node:readline/promises';

/** A terminal prompt, for `purge` without --yes. */
export function terminalConfirm(): ((question: string) => Promise<boolean>) | undefined {
  if (!process.stdin.isTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(question)).trim());
    } finally {
      rl.close();
    }
  };
}
