import { localSettingValues, settingDeclarations } from '../src/config.js';
import type { SettingDeclaration } from '../src/config.js';

/*
 * What docs/settings.md's tables and local.settings.sample.json say, rendered from the settings'
 * declaration (src/config/): `npm run settings:write` writes them, test/docs/settingsReference.test.ts
 * fails when the files differ.
 */

export const tablesBegin =
  "<!-- The tables below are generated from the settings' declaration (src/config/) by `npm run settings:write`: edit the declaration, not the tables. -->";
export const tablesEnd = '<!-- End of the generated tables. -->';

const tableTitles = { host: "## The Functions host's own", app: "## The app's" } as const;

/** The reference's two tables, between their markers. */
export function settingsTables(): string {
  const declarations = Object.entries(settingDeclarations as Record<string, SettingDeclaration>);
  const table = (which: 'host' | 'app') => [
    tableTitles[which],
    '',
    '| Setting | Default | Unit | Read by | Secret | Meaning |',
    '|---|---|---|---|---|---|',
    ...declarations.filter(([, d]) => d.table === which).map(([name, d]) => row(name, d)),
  ];
  return [tablesBegin, '', ...table('host'), '', ...table('app'), '', tablesEnd].join('\n');
}

function row(name: string, d: SettingDeclaration): string {
  return `| \`${name}\` | ${defaultCell(d)} | ${d.unit ?? ''} | ${d.readBy.join(', ')} | ${d.secret ? 'yes' : ''} | ${d.description} |`;
}

function defaultCell(d: SettingDeclaration): string {
  if (d.defaultText !== undefined) return d.defaultText;
  if (d.default === undefined) return '—';
  return `\`${d.default}\`${d.defaultNote ? ` (${d.defaultNote})` : ''}`;
}

/** docs/settings.md with its tables replaced by the declaration's. */
export function withSettingsTables(reference: string): string {
  const begin = reference.indexOf(tablesBegin);
  const end = reference.indexOf(tablesEnd);
  if (begin < 0 || end < begin) throw new Error(`docs/settings.md has lost its markers: ${tablesBegin} ... ${tablesEnd}`);
  return `${reference.slice(0, begin)}${settingsTables()}${reference.slice(end + tablesEnd.length)}`;
}

/** local.settings.sample.json, whole. */
export function localSettingsSample(): string {
  return `${JSON.stringify({ IsEncrypted: false, Values: localSettingValues() }, null, 2)}\n`;
}
