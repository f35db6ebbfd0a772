import { connectionSettings } from './connectionSettings.js';
import { hostSettings } from './hostSettings.js';
import { intakeSettings } from './intakeSettings.js';
import { messageSettings } from './messageSettings.js';
import { retentionSettings } from './retentionSettings.js';
import { retrySettings } from './retrySettings.js';
import type { SettingDeclaration } from './settingDeclaration.js';
import { shipmentSettings } from './shipmentSettings.js';
import { sweeperSettings } from './sweeperSettings.js';
import { telemetrySettings } from './telemetrySettings.js';

/**
 * Every setting, declared once, in the order the settings reference lists them. The app's schema,
 * its defaults, docs/settings.md's tables and local.settings.sample.json are derived from this.
 */
export const settingDeclarations = {
  ...hostSettings,
  ...connectionSettings,
  ...retentionSettings,
  ...messageSettings,
  ...retrySettings,
  ...sweeperSettings,
  ...shipmentSettings,
  ...telemetrySettings,
  ...intakeSettings,
} satisfies Record<string, SettingDeclaration>;

export type SettingDeclarations = typeof settingDeclarations;
export type SettingName = keyof SettingDeclarations;
