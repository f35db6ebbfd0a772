import { execFileSync } from 'node:child_process';
import { ManagedIdentityCredential } from '@azure/identity';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/configurationError.js';
import { credentialFrom, startAzureMonitor } from '../../../src/telemetry/azureMonitor.js';

describe('telemetry set-up', () => {
  it('sets nothing up, and loads nothing of the distro, without a connection string (the compiled app, as the worker loads it)', () => {
    const script = [
      "require('./dist/src/telemetry/startup.js');",
      "const { metrics, trace } = require('@opentelemetry/api');",
      'const loaded = Object.keys(require.cache).filter((k) => /node_modules\\/(applicationinsights|@azure\\/monitor-opentelemetry)\\//.test(k)).length;',
      'console.log(JSON.stringify({ loaded, meter: metrics.getMeterProvider().constructor.name, tracer: trace.getTracerProvider().getDelegate().constructor.name }));',
    ].join('\n');
    const env = { ...process.env, APPLICATIONINSIGHTS_CONNECTION_STRING: '' };
    expect(JSON.parse(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }))).toEqual({
      loaded: 0,
      meter: 'NoopMeterProvider',
      tracer: 'NoopTracerProvider',
    });
    expect(startAzureMonitor({ APPLICATIONINSIGHTS_CONNECTION_STRING: '  ' })).toBe(false);
  });

  it('authenticates with the managed identity APPLICATIONINSIGHTS_AUTHENTICATION_STRING names, and refuses anything but AAD by name', () => {
    expect(credentialFrom(undefined)).toBeUndefined();
    expect(credentialFrom('ClientId=00000000-0000-0000-0000-000000000001;Authorization=AAD')).toBeInstanceOf(ManagedIdentityCredential);
    expect(credentialFrom('Authorization=AAD')).toBeInstanceOf(ManagedIdentityCredential);
    expect(() => credentialFrom('Authorization=Key')).toThrow(ConfigurationError);
    expect(() => credentialFrom('Authorization=Key')).toThrow(/APPLICATIONINSIGHTS_AUTHENTICATION_STRING: must be Authorization=AAD/);
  });
});
