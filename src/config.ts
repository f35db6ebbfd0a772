// The path every composition root, the operator tool and the tests import settings from; the
// settings themselves are declared, read and checked in src/config/.
export {
  isFunctionDisabled,
  loadOperatorActionRetentionSeconds,
  loadResubmitRetention,
  loadSettings,
  loadSetupSettings,
  localSettingValues,
  operatorActionRetentionNames,
  resubmitRetentionNames,
  settingDeclarations,
  settingDefaults,
  setupSettingNames,
} from './config/index.js';
export type {
  CallerIdentityMode,
  ResubmitRetentionSettings,
  SettingDeclaration,
  SettingDeclarations,
  SettingDocs,
  SettingName,
  SettingReader,
  Settings,
  SetupSettings,
} from './config/index.js';
