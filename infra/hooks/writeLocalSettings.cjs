#!/usr/bin/env node
// azd postprovision hook: writes local.settings.json from the provisioned environment.
// Plain Node (no TypeScript, no npx): azd runs it before the app is built, and it must never fetch a
// tool at run time.
'use strict';
const { execFileSync } = require('node:child_process');
const { copyFileSync, existsSync, readFileSync, writeFileSync } = require('node:fs');

const required = ['SERVICEBUS_FULLY_QUALIFIED_NAMESPACE', 'ORDERS_QUEUE_NAME', 'COSMOS_ENDPOINT', 'COSMOS_DATABASE', 'COSMOS_ORDERS_CONTAINER'];
const passedThrough = [
  'ORDERS_QUEUE_NAME',
  'COSMOS_ENDPOINT',
  'COSMOS_DATABASE',
  'COSMOS_ORDERS_CONTAINER',
  'COSMOS_LEASES_CONTAINER',
  'ORDER_EVENTS_TOPIC_NAME',
  'FULFILMENT_SUBSCRIPTION_NAME',
  'CARRIER_API_URL',
  'QUEUE_MAX_DELIVERY_COUNT',
  'QUEUE_LOCK_DURATION_SECONDS',
  'QUEUE_MESSAGE_TTL_SECONDS',
  'LOCK_RENEWAL_MAX_SECONDS',
  'TRANSIENT_RETRY_BUDGET_SECONDS',
  'DLQ_RESUBMIT_HORIZON_SECONDS',
  'INBOX_MARKER_TTL_SECONDS',
];

/**
 * local.settings.json for running the app on a developer's machine against the provisioned
 * resources, signed in with `az login`: identity-based connections only (no key is ever written),
 * `IsEncrypted` a boolean and every value a string, as Core Tools expects.
 */
function localSettingsFromAzd(env) {
  const missing = required.filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`the azd environment lacks ${missing.join(', ')}: run "azd provision" first`);
  const values = {
    FUNCTIONS_WORKER_RUNTIME: 'node',
    AzureWebJobsStorage: 'UseDevelopmentStorage=true',
    ServiceBusConnection__fullyQualifiedNamespace: String(env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE),
    // The sweeper's timer binding resolves %PARKED_SWEEP_SCHEDULE%: the host refuses to start without it.
    PARKED_SWEEP_SCHEDULE: '0 */5 * * * *',
    OUTBOX_SWEEP_SCHEDULE: '30 */1 * * * *',
    // The outbox publisher's trigger, signed in as the developer (az login), like the app's own client.
    CosmosDbConnection__accountEndpoint: String(env.COSMOS_ENDPOINT),
    SHIPMENT_RECONCILE_SCHEDULE: '45 */2 * * * *',
    // Delayed-retry copies are signed with RETRY_STATE_SIGNING_KEY, a Key Vault reference Core Tools
    // does not resolve: a local instance on the shared queue hands a failure back to Service Bus instead.
    DELAYED_RETRY_ENABLED: 'false',
  };
  // Core Tools does not resolve Key Vault references: without a carrier URL (and a CARRIER_API_KEY
  // you add yourself) the shipment functions stay off locally, as in Azure.
  if (!env.CARRIER_API_URL) {
    values['AzureWebJobs.requestShipment.Disabled'] = 'true';
    values['AzureWebJobs.reconcileShipments.Disabled'] = 'true';
  }
  for (const name of passedThrough) if (env[name] !== undefined) values[name] = String(env[name]);
  return { IsEncrypted: false, Values: values };
}

/**
 * Writes `path`; an existing file that differs is first copied to `<path>.<timestamp>.bak`, so a
 * developer's own settings are never lost. Returns the backup's path, if one was made.
 */
function writeLocalSettings(path, settings, now = new Date()) {
  const text = `${JSON.stringify(settings, null, 2)}\n`;
  let backup;
  if (existsSync(path) && readFileSync(path, 'utf8') !== text) {
    backup = `${path}.${now.toISOString().replace(/[:.]/g, '-')}.bak`;
    copyFileSync(path, backup);
  }
  writeFileSync(path, text);
  return backup;
}

function main() {
  const env = JSON.parse(execFileSync('azd', ['env', 'get-values', '--output', 'json'], { encoding: 'utf8' }));
  const backup = writeLocalSettings('local.settings.json', localSettingsFromAzd(env));
  console.log('Wrote local.settings.json for the provisioned resources (identity-based; sign in with `az login`).');
  if (backup) console.log(`Your previous local.settings.json is kept as ${backup}.`);
}

module.exports = { localSettingsFromAzd, writeLocalSettings };
if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(`postprovision: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
