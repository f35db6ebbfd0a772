import { days } from './days.js';
import { oneOf, signingKey, wholeNumber, withRule } from './settingKinds.js';

/** The retry layers: in the invocation, then delayed copies with a signed state, within a budget. */
export const retrySettings = {
  TRANSIENT_RETRY_IN_INVOCATION_MS: wholeNumber(
    { min: 0, default: 10_000, atMost: [60_000, 'must be at most 60000 (well inside the lock)'] },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'ms',
      description:
        'How long one invocation retries a failure that heals with time (Cosmos DB 408/429/449/5xx, network), with exponential backoff and jitter, before the delayed layer (max 60000).',
    },
  ),
  DELAYED_RETRY_ENABLED: oneOf(['true', 'false'], 'true', 'must be true or false', {
    table: 'app',
    readBy: ['app'],
    description: '`false` hands such a failure straight back to Service Bus (an abandon: immediate redelivery).',
  }),
  RETRY_STATE_SIGNING_KEY: withRule(signingKey, {
    table: 'app',
    readBy: ['app'],
    secret: true,
    defaultText: '— (required while `DELAYED_RETRY_ENABLED` is `true`)',
    localValue: 'local-only-retry-state-signing-key-not-a-secret',
    description:
      "The secret (at least 32 characters) that signs the retry state a delayed-retry copy carries (`retry-signature`, HMAC-SHA256) and keys the copy's MessageId, so that no sender can forge a budget or take a copy's MessageId first. In Azure a Key Vault reference (`@Microsoft.KeyVault(VaultName=...;SecretName=retry-state-signing-key)`); a value still starting `@Microsoft.KeyVault(` stops start-up. Every instance must share it. `azd provision` generates it once per environment (the `preprovision` hook) and keeps it; to rotate it without restarting the budget of copies in flight, move the old value to `RETRY_STATE_SIGNING_KEY_PREVIOUS` first ([deployment](deployment.md#rotating-the-retry-state-signing-key)). Locally, `npm run local` draws a random one per run.",
  }),
  RETRY_STATE_SIGNING_KEY_PREVIOUS: withRule(signingKey, {
    table: 'app',
    readBy: ['app'],
    secret: true,
    defaultText: '— (optional)',
    description:
      'The signing key before the last rotation (at least 32 characters, the same rules): a copy whose `retry-signature` verifies under it is trusted too, so its retry budget goes on across the rotation. It never signs: the next copy is signed with `RETRY_STATE_SIGNING_KEY`. In Azure a Key Vault reference to `retry-state-signing-key-previous`, which holds the current key again when no rotation is under way. Drop it once `TRANSIENT_RETRY_BUDGET_SECONDS` has passed since the rotation.',
  }),
  DELAYED_RETRY_FIRST_DELAY_SECONDS: wholeNumber(
    { min: 1, default: 30 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: 'Delay of the first delayed retry; each later one doubles.',
    },
  ),
  DELAYED_RETRY_MAX_DELAY_SECONDS: wholeNumber(
    { min: 1, default: 900 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description: 'The cap of those delays.',
    },
  ),
  TRANSIENT_RETRY_BUDGET_SECONDS: wholeNumber(
    { min: 0, default: days(1) },
    {
      table: 'app',
      readBy: ['app', 'operator tool'],
      unit: 's',
      defaultNote: '24 h',
      description:
        'From the first failure: past it, the message takes the dead-letter path with reason `RetryBudgetExhausted` and the last error recorded. Part of the retention rule. The shipment reconciler uses it too: a record whose carrier gives no answer for this long (from the first such round) is escalated.',
    },
  ),
};
