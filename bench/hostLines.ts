// The line protocol between `npm run bench -- --host` and its child processes (bench/hostProcess.ts):
// commands on the child's stdin, reports on its stdout, one JSON object a line.

/** What the bench asks of a child. */
export type HostCommand =
  /** (the stack's process) Report `drained` once the orders queue holds no message, active or locked. */
  | { readonly cmd: 'watch' }
  /** (the consumer's process) Start draining the orders queue: the app's host, or the bare loop doing `path`'s work. */
  | { readonly cmd: 'start'; readonly path: string }
  /** (the consumer's process) Stop receiving and report what was delivered. */
  | { readonly cmd: 'stop' }
  /** Close everything and exit (so that a CPU profile is written). */
  | { readonly cmd: 'quit' };

/**
 * What a child reports. Times are milliseconds with a fraction on the machine's monotonic clock
 * (process.hrtime, CLOCK_MONOTONIC: the same in every process, and the clock of V8's CPU profiles).
 */
export type HostReport =
  /** Ready for commands; `settings` when it runs the stack (the app settings pointing at it). */
  | { readonly host: 'ready'; readonly settings?: Readonly<Record<string, string>> }
  | { readonly host: 'watching' }
  /** The orders queue is empty; `deadLettered`: messages moved to its dead-letter queue since `watch`. */
  | { readonly host: 'drained'; readonly at: number; readonly deadLettered: number }
  | { readonly host: 'started' }
  /** `firstAt`: when the first delivery reached the function (or the bare handler); `failed`: deliveries that were abandoned. */
  | { readonly host: 'stopped'; readonly firstAt?: number; readonly deliveries: number; readonly failed: number };

export const hostLine = (report: HostReport): string => `${JSON.stringify(report)}\n`;
export const commandLine = (command: HostCommand): string => `${JSON.stringify(command)}\n`;
export const preciseNow = (): number => Number(process.hrtime.bigint()) / 1e6;
