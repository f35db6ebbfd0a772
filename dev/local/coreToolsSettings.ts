import { localSettingValues } from '../../src/config.js';

/**
 * Every setting a Functions host needs to run this app against the local stack, as the Values of a
 * local.settings.json: local.settings.sample.json's (Core Tools' own, every app setting at its
 * default; both derived from the settings' declaration), with the stack's connections and ports.
 */
export function coreToolsSettings(stackSettings: Readonly<Record<string, string>>): Record<string, string> {
  return { ...localSettingValues(), ...stackSettings };
}

/** As a local.settings.json to paste. */
export function localSettingsJson(stackSettings: Readonly<Record<string, string>>): string {
  return JSON.stringify({ IsEncrypted: false, Values: coreToolsSettings(stackSettings) }, null, 2);
}
