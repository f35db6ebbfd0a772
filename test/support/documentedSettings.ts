import { readFileSync } from 'node:fs';

/** The app settings named in the first column of the settings reference's tables (docs/settings.md). */
export function documentedSettings(path = 'docs/settings.md'): string[] {
  const text = readFileSync(path, 'utf8');
  return [...text.matchAll(/^\| `([A-Za-z_]+)` \|/gm)]
    .map((m) => m[1] ?? '')
    .filter((n) => /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(n) || ['ServiceBusConnection', 'CosmosDbConnection', 'AzureWebJobsStorage'].includes(n));
}

/** The Default column of the settings reference, by setting: the first `code` span, or undefined for "—". */
export function documentedDefaults(path = 'docs/settings.md'): Map<string, string | undefined> {
  const text = readFileSync(path, 'utf8');
  return new Map([...text.matchAll(/^\| `([A-Za-z_]+)` \| ([^|]*) \|/gm)].map((m) => [m[1] ?? '', /^`([^`]*)`/.exec((m[2] ?? '').trim())?.[1]]));
}
