import type { LogSink } from '../../src/telemetry/index.js';

export interface LoggedLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly record: Record<string, unknown>;
}

/** A LogSink that keeps the structured lines the consumer writes, parsed. */
export class RecordingLog implements LogSink {
  readonly lines: LoggedLine[] = [];
  info(...args: unknown[]): void {
    this.push('info', args);
  }
  warn(...args: unknown[]): void {
    this.push('warn', args);
  }
  error(...args: unknown[]): void {
    this.push('error', args);
  }
  outcomes(): string[] {
    return this.lines.map((l) => String(l.record.outcome));
  }
  private push(level: LoggedLine['level'], args: unknown[]): void {
    this.lines.push({ level, record: JSON.parse(String(args[0])) as Record<string, unknown> });
  }
}
