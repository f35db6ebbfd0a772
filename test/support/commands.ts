import { execFileSync } from 'node:child_process';

/** True when a command-line tool answers, for suites that must say "skipped because X" without it. */
export function commandAvailable(command: string, ...args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
