import { z } from 'zod';
import { settingDeclarations } from './settingDeclarations.js';
import type { SettingDeclarations } from './settingDeclarations.js';

/** The settings the app reads: those declared with a schema. */
export type AppSettingName = {
  [K in keyof SettingDeclarations]: SettingDeclarations[K] extends { readonly schema: () => z.ZodType } ? K : never;
}[keyof SettingDeclarations];

type AppSettingsShape = { [K in AppSettingName]: SettingDeclarations[K] extends { readonly schema: () => infer S } ? S : never };

/**
 * Built when the settings are read (once, at start-up), not when the module loads: so each rule is
 * checked by the tests that read settings, mutation testing included (it cannot tell which test
 * depends on code that ran at import).
 */
export function settingsSchema() {
  const shape = Object.fromEntries(
    Object.entries(settingDeclarations).flatMap(([name, declaration]) => ('schema' in declaration ? [[name, declaration.schema()]] : [])),
  );
  return z.object(shape as AppSettingsShape);
}

export type ParsedSettings = z.infer<ReturnType<typeof settingsSchema>>;
