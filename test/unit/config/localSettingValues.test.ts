import { describe, expect, it } from 'vitest';
import { localSettingValues, settingDefaults } from '../../../src/config.js';

describe('localSettingValues', () => {
  const values = localSettingValues();

  it("gives a setting its local value where it has one: Core Tools' own, the emulators' connections", () => {
    expect(values).toMatchObject({
      FUNCTIONS_WORKER_RUNTIME: 'node',
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
      ORDERS_QUEUE_NAME: 'orders',
    });
  });

  it('else its default, as text, else empty (unset)', () => {
    expect(values.INBOX_MARKER_TTL_SECONDS).toBe(String(settingDefaults.INBOX_MARKER_TTL_SECONDS));
    expect(values.PARKED_SWEEP_SCHEDULE).toBe('0 */5 * * * *');
    expect(values.CONSUMER_NAME).toBe('');
    expect(values.PARKED_ITEM_HORIZON_SECONDS).toBe('');
  });

  it('leaves out the settings no local value makes sense for', () => {
    expect(Object.keys(values)).not.toContain('COSMOS_CA_CERT_PATH');
    expect(Object.keys(values)).not.toContain('ServiceBusConnection__fullyQualifiedNamespace');
  });
});
