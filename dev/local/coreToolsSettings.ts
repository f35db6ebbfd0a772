import { settingDefaults } from '../../src/config.js';

/**
 * Every setting a Functions host needs to run this app against the local stack, as the Values of a
 * local.settings.json: what Core Tools itself requires (worker runtime, host storage), the stack's
 * connections, and every app setting at its default, so nothing has to be looked up elsewhere.
 * The same names as local.settings.sample.json (a test keeps them equal).
 */
export function coreToolsSettings(stackSettings: Readonly<Record<string, string>>): Record<string, string> {
  const defaults = Object.fromEntries(Object.entries(settingDefaults).map(([name, value]) => [name, value === undefined ? '' : String(value)]));
  return {
    FUNCTIONS_WORKER_RUNTIME: 'node',
    // Core Tools wants host storage for non-HTTP triggers: Azurite, or a real account.
    AzureWebJobsStorage: 'UseDevelopmentStorage=true',
    // The host's limit on a request body (100 MiB unset); 1 MiB is ample for an order (docs/settings.md).
    FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: '1048576',
    CONSUMER_NAME: '',
    // Empty: no telemetry. An Application Insights connection string here exports there (README, telemetry).
    APPLICATIONINSIGHTS_CONNECTION_STRING: '',
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: '',
    // Empty: no rotation of the retry state signing key under way (docs/deployment.md).
    RETRY_STATE_SIGNING_KEY_PREVIOUS: '',
    ...defaults,
    ...stackSettings,
  };
}

/** As a local.settings.json to paste. */
export function localSettingsJson(stackSettings: Readonly<Record<string, string>>): string {
  return JSON.stringify({ IsEncrypted: false, Values: coreToolsSettings(stackSettings) }, null, 2);
}
