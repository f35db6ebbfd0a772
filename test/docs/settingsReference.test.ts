import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { operatorActionRetentionNames, resubmitRetentionNames, settingDeclarations, setupSettingNames } from '../../src/config.js';
import type { SettingDeclaration, SettingReader } from '../../src/config.js';
import { localSettingsSample, settingsTables, tablesBegin, tablesEnd, withSettingsTables } from '../../tools/settingsReference.js';

const declared = Object.entries(settingDeclarations as Record<string, SettingDeclaration>);
const readBy = (reader: SettingReader) => declared.filter(([, d]) => d.readBy.includes(reader)).map(([name]) => name);
const sourceOf = (folder: string) =>
  readdirSync(folder)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(folder, f), 'utf8'))
    .join('\n');
const namesIn = (text: string, pattern: RegExp) => new Set([...text.matchAll(pattern)].map((m) => m[1] ?? ''));

describe('the settings reference (docs/settings.md) and local.settings.sample.json', () => {
  it('have the tables the declaration renders: a setting declared without them, or changed in one place only, fails here (npm run settings:write)', () => {
    const reference = readFileSync('docs/settings.md', 'utf8');
    expect(reference.slice(reference.indexOf(tablesBegin), reference.indexOf(tablesEnd) + tablesEnd.length)).toBe(settingsTables());
  });

  it('list every declared setting once, in a row of its table', () => {
    const tables = settingsTables();
    for (const [name] of declared)
      expect(
        tables.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`)),
        name,
      ).toHaveLength(1);
  });

  it('keeps the text around the tables when they are written, and refuses a reference whose markers are gone', () => {
    const written = withSettingsTables(`before\n${tablesBegin}\nold rows\n${tablesEnd}\nafter\n`);
    expect(written).toBe(`before\n${settingsTables()}\nafter\n`);
    expect(() => withSettingsTables('no markers')).toThrow(/docs\/settings.md has lost its markers/);
  });

  it('local.settings.sample.json is what the declaration renders', () => {
    expect(readFileSync('local.settings.sample.json', 'utf8')).toBe(localSettingsSample());
  });
});

describe('who reads a setting, as the declaration says', () => {
  it('host: every setting a function binds (%NAME%, a connection) is declared read by the host, and every app setting declared so is bound', () => {
    const functions = sourceOf('functions');
    const bound = new Set([...namesIn(functions, /%([A-Za-z_]+)%/g), ...namesIn(functions, /connection: '([A-Za-z_]+)'/g)]);
    expect(bound.size).toBeGreaterThan(5);
    for (const name of bound) expect(settingDeclarations[name as keyof typeof settingDeclarations]?.readBy, name).toContain('host');
    const appTable = readBy('host').filter((name) => settingDeclarations[name as keyof typeof settingDeclarations].table === 'app');
    // A connection's other settings (ServiceBusConnection__fullyQualifiedNamespace) are the host's by their prefix.
    expect(appTable.filter((name) => !bound.has(name) && !bound.has(name.split('__')[0] ?? ''))).toEqual([]);
  });

  it('app: exactly the settings declared with a rule, which loadSettings reads', () => {
    expect(readBy('app')).toEqual(declared.filter(([, d]) => d.schema !== undefined).map(([name]) => name));
  });

  it('telemetry: exactly the settings the telemetry set-up reads', () => {
    const read = namesIn(sourceOf('src/telemetry'), /\benv\.([A-Z_]+)/g);
    expect(readBy('telemetry').sort()).toEqual(
      declared
        .map(([name]) => name)
        .filter((name) => read.has(name))
        .sort(),
    );
  });

  it("operator tool: exactly the settings the tool and the doctor read, by name or with the app's rules", () => {
    const picked = [setupSettingNames, resubmitRetentionNames, operatorActionRetentionNames].flatMap((names) => Object.keys(names));
    const read = new Set([...picked, ...namesIn(`${sourceOf('src/cli')}\n${sourceOf('src/doctor')}`, /\benv\.([A-Za-z_]+)/g)]);
    expect(readBy('operator tool').sort()).toEqual(
      declared
        .map(([name]) => name)
        .filter((name) => read.has(name))
        .sort(),
    );
  });
});
