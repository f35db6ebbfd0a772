import { settingDeclarations } from './settingDeclarations.js';
import type { SettingDeclaration } from './settingDeclaration.js';

/**
 * The Values of local.settings.sample.json: every setting a Functions host needs to run this app on
 * this machine, each at its local value, else its default, else empty (unset).
 */
export function localSettingValues(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(settingDeclarations as Record<string, SettingDeclaration>).flatMap(([name, d]) =>
      d.localValue === null ? [] : [[name, d.localValue ?? (d.default === undefined ? '' : String(d.default))]],
    ),
  );
}
