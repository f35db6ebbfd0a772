import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of host.json the local runner honours, with the Functions host's defaults. */
export interface ServiceBusHostOptions {
  readonly maxConcurrentCalls: number;
  readonly maxAutoLockRenewalDurationMs: number;
  readonly autoCompleteMessages: boolean;
}

const hostDefaults: ServiceBusHostOptions = {
  maxConcurrentCalls: 16,
  maxAutoLockRenewalDurationMs: 5 * 60_000,
  autoCompleteMessages: true,
};

export function readHostJson(appRoot: string): ServiceBusHostOptions {
  const path = join(appRoot, 'host.json');
  if (!existsSync(path)) return hostDefaults;
  const serviceBus = (JSON.parse(readFileSync(path, 'utf8')) as { extensions?: { serviceBus?: Record<string, unknown> } }).extensions?.serviceBus ?? {};
  return {
    maxConcurrentCalls: typeof serviceBus.maxConcurrentCalls === 'number' ? serviceBus.maxConcurrentCalls : hostDefaults.maxConcurrentCalls,
    maxAutoLockRenewalDurationMs:
      typeof serviceBus.maxAutoLockRenewalDuration === 'string'
        ? timeSpanToMs(serviceBus.maxAutoLockRenewalDuration)
        : hostDefaults.maxAutoLockRenewalDurationMs,
    autoCompleteMessages: typeof serviceBus.autoCompleteMessages === 'boolean' ? serviceBus.autoCompleteMessages : hostDefaults.autoCompleteMessages,
  };
}

/** A .NET TimeSpan as host.json writes it: `[d.]hh:mm:ss[.fff]`. */
export function timeSpanToMs(value: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/.exec(value.trim());
  if (!match) throw new Error(`host.json: ${JSON.stringify(value)} is not a TimeSpan such as 00:05:00`);
  const [, days = '0', hours = '0', minutes = '0', seconds = '0', fraction = '0'] = match;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000 + Math.round(Number(`0.${fraction}`) * 1000);
}

/**
 * App settings as Core Tools gives them to the worker: `local.settings.json` Values, with the
 * process environment taking precedence.
 */
export function readAppSettings(appRoot: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const path = join(appRoot, 'local.settings.json');
  const values = existsSync(path) ? ((JSON.parse(readFileSync(path, 'utf8')) as { Values?: Record<string, unknown> }).Values ?? {}) : {};
  const fromFile = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
  const fromEnv = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { ...fromFile, ...fromEnv };
}

/** `%NAME%` in a binding property is replaced by the app setting NAME, as the host does. */
export function resolveBindingExpression(value: string, settings: Readonly<Record<string, string>>): string {
  return value.replace(/%([^%]+)%/g, (_, name: string) => {
    const resolved = settings[name];
    if (resolved === undefined) throw new Error(`binding expression %${name}% names an app setting that is not set`);
    return resolved;
  });
}

/**
 * The Functions host's limit on an HTTP request body: Kestrel's MaxRequestBodySize is
 * ScriptConstants.DefaultMaxRequestBodySize, 104857600 bytes (azure-functions-host
 * src/WebJobs.Script.WebHost/Program.cs, src/WebJobs.Script/ScriptConstants.cs), and
 * HttpRequestBodySizeMiddleware replaces it per request with FUNCTIONS_REQUEST_BODY_SIZE_LIMIT when
 * that parses as a whole number. Anything else is ignored here (a negative number, which Kestrel
 * would refuse on every request, included).
 */
export const defaultRequestBodySizeLimitBytes = 104_857_600;

export function requestBodySizeLimitBytes(settings: Readonly<Record<string, string>>): number {
  const value = settings.FUNCTIONS_REQUEST_BODY_SIZE_LIMIT?.trim() ?? '';
  const bytes = Number(value);
  return /^\d+$/.test(value) && Number.isSafeInteger(bytes) ? bytes : defaultRequestBodySizeLimitBytes;
}

/**
 * `AzureWebJobs.<name>.Disabled` (or `AzureWebJobs__<name>__Disabled`, as Linux app settings spell
 * it) set to true or 1: the host starts no listener for that function.
 */
export function isFunctionDisabled(name: string, settings: Readonly<Record<string, string | undefined>>): boolean {
  const value = settings[`AzureWebJobs.${name}.Disabled`] ?? settings[`AzureWebJobs__${name}__Disabled`];
  return value !== undefined && ['true', '1'].includes(value.trim().toLowerCase());
}
