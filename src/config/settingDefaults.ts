import { settingDeclarations } from './settingDeclarations.js';
import type { SettingDeclarations } from './settingDeclarations.js';
import type { AppSettingName } from './settingsSchema.js';

type Defaults = {
  readonly [K in AppSettingName as SettingDeclarations[K] extends { readonly default: unknown } ? K : never]: SettingDeclarations[K] extends {
    readonly default: infer V;
  }
    ? V
    : never;
};

/** Defaults of the app's settings, named so the tests and the local stack can quote them. */
export const settingDefaults = Object.freeze(
  Object.fromEntries(
    Object.entries(settingDeclarations).flatMap(([name, declaration]) =>
      'schema' in declaration && 'default' in declaration ? [[name, declaration.default]] : [],
    ),
  ),
) as Defaults;
