import { z } from 'zod';
import { resolvedSecret, textWithDefault, wholeNumber, withRule } from './settingKinds.js';

/** The fulfilment consumer, the carrier it calls, and the reconciler. */
export const shipmentSettings = {
  FULFILMENT_SUBSCRIPTION_NAME: textWithDefault('fulfilment', {
    table: 'app',
    readBy: ['host', 'app', 'operator tool'],
    description: 'The `order-events` subscription `requestShipment` reads; its delayed-retry copies are sent to the topic addressed (`to`) to it.',
  }),
  CARRIER_API_URL: withRule(
    () => z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL, the base of the carrier API (https://api.carrier.example/v1/)' }).optional(),
    {
      table: 'app',
      readBy: ['app'],
      unit: 'URL',
      localValue: 'http://127.0.0.1:7080/',
      description:
        'Base URL of the carrier API: `https://`, or plain `http://` only to a loopback address (127.0.0.0/8, `::1`, `localhost`); anything else stops start-up. The client follows no redirect (an error naming the `Location`) and reads answers up to 64 KiB. **Required by `requestShipment` and `reconcileShipments`** unless they are disabled (`AzureWebJobs.<name>.Disabled=true`, which the Bicep sets when no carrier is given). Locally the carrier stand-in, `http://127.0.0.1:7080/`.',
    },
  ),
  CARRIER_API_KEY: withRule(resolvedSecret, {
    table: 'app',
    readBy: ['app'],
    secret: true,
    localValue: 'local-carrier-key',
    description:
      'Sent as `Authorization: Bearer`. In Azure a Key Vault reference (`@Microsoft.KeyVault(VaultName=...;SecretName=carrier-api-key)`), resolved by the platform with the app identity; a value still starting `@Microsoft.KeyVault(` stops start-up (the reference did not resolve), and so does a key with a `CARRIER_API_URL` that is not `https://` (loopback excepted).',
  }),
  CARRIER_TIMEOUT_MS: wholeNumber(
    { min: 100, default: 10_000, atMost: [120_000, 'must be at most 120000'] },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'ms',
      description:
        'Each carrier call is abandoned after this; its outcome is then unknown and is reconciled by a look-up before any second call. 100 to 120000.',
    },
  ),
  SHIPMENT_LEASE_SECONDS: wholeNumber(
    { min: 1, default: 60 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description:
        'How long the owner of an in-progress shipment record may call the carrier before others reconcile it. Independent of the message lock and the function timeout; must be at least 3 x `CARRIER_TIMEOUT_MS` (a look-up and a call fit inside).',
    },
  ),
  SHIPMENT_RECONCILE_SCHEDULE: textWithDefault('45 */2 * * * *', {
    table: 'app',
    readBy: ['host', 'app'],
    unit: 'NCRONTAB',
    description: "`reconcileShipments`' timer. **Required by the host** (the trigger reads `%SHIPMENT_RECONCILE_SCHEDULE%`).",
  }),
  SHIPMENT_RECONCILE_MAX_ATTEMPTS: wholeNumber(
    { min: 1, default: 5 },
    {
      table: 'app',
      readBy: ['app'],
      description:
        'Reconciler rounds in which the carrier answers without an outcome (a request under the key still in flight) before a record is escalated (`npm run dlq -- shipments`). Counted against one lease (a takeover starts them again), at least a lease apart (runs in quick succession are one round). A carrier that gives no answer counts against `TRANSIENT_RETRY_BUDGET_SECONDS` instead.',
    },
  ),
  SHIPMENT_RECONCILE_BATCH_SIZE: wholeNumber(
    { min: 1, default: 50, atMost: [1000, 'must be at most 1000'] },
    {
      table: 'app',
      readBy: ['app'],
      description: 'Expired records one reconciler run examines (a `TOP` on its query). 1 to 1000.',
    },
  ),
};
