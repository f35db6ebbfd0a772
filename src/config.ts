// The door to the settings: every composition root, the operator tool and the tests import them from
// here. The settings themselves are declared, read and checked in src/config/, which has no index of
// its own, so that this is the one list of what it exports.
export { isFunctionDisabled } from './config/functionDisabled.js';
export { localSettingValues } from './config/localSettingValues.js';
export { loadSettings } from './config/loadSettings.js';
export {
  loadOperatorActionRetentionSeconds,
  loadResubmitRetention,
  operatorActionRetentionNames,
  resubmitRetentionNames,
} from './config/operatorToolSettings.js';
export type { ResubmitRetentionSettings } from './config/operatorToolSettings.js';
export { settingDeclarations } from './config/settingDeclarations.js';
export type { SettingDeclarations, SettingName } from './config/settingDeclarations.js';
export type { SettingDeclaration, SettingDocs, SettingReader } from './config/settingDeclaration.js';
export { settingDefaults } from './config/settingDefaults.js';
export type { Settings } from './config/settings.js';
export { loadSetupSettings, setupSettingNames } from './config/setupSettings.js';
export type { SetupSettings } from './config/setupSettings.js';
export type { CallerIdentityMode } from './config/intakeSettings.js';
