import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * What the distro (applicationinsights 3.x, through @azure/monitor-opentelemetry) resolves our options to
 * under a given environment: its own configuration object, built in a fresh process so that the
 * environment it reads once is the one given here. The compiled app's options, as the worker loads them.
 */
function resolvedSampling(env: Record<string, string>): { samplingRatio: number; tracesPerSecond: number } {
  const script = [
    "const { dirname, join } = require('node:path');",
    "const distroRoot = dirname(require.resolve('@azure/monitor-opentelemetry/package.json', { paths: [dirname(require.resolve('applicationinsights/package.json'))] }));",
    "const { InternalConfig } = require(join(distroRoot, 'dist', 'commonjs', 'shared', 'config.js'));",
    "const { azureMonitorOptions } = require('./dist/src/telemetry/azureMonitorDistro.js');",
    "const config = new InternalConfig(azureMonitorOptions('InstrumentationKey=00000000-0000-0000-0000-000000000000', undefined));",
    'console.log(JSON.stringify({ samplingRatio: config.samplingRatio, tracesPerSecond: config.tracesPerSecond }));',
  ].join('\n');
  const { OTEL_TRACES_SAMPLER: _sampler, OTEL_TRACES_SAMPLER_ARG: _arg, ...rest } = process.env;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { env: { ...rest, ...env }, encoding: 'utf8' })) as {
    samplingRatio: number;
    tracesPerSecond: number;
  };
}

/** The two app settings infra/modules/functionApp.bicep gives the app (the template test asserts them compiled). */
function deployedSamplerSettings(): Record<string, string> {
  const bicep = readFileSync('infra/modules/functionApp.bicep', 'utf8');
  return Object.fromEntries([...bicep.matchAll(/^\s*(OTEL_TRACES_SAMPLER(?:_ARG)?): '([^']*)'$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

describe("sampling of the worker's telemetry (docs/operations.md, sampling)", () => {
  it('samples nothing with our options alone: every trace, no rate limit', () => {
    expect(resolvedSampling({})).toEqual({ samplingRatio: 1, tracesPerSecond: 0 });
  });

  it("samples nothing under the settings Azure gives the app (OTEL_TRACES_SAMPLER, which the host's exporter reads too)", () => {
    const settings = deployedSamplerSettings();
    expect(settings).toEqual({ OTEL_TRACES_SAMPLER: 'microsoft.fixed_percentage', OTEL_TRACES_SAMPLER_ARG: '1.0' });
    expect(resolvedSampling(settings)).toEqual({ samplingRatio: 1, tracesPerSecond: 0 });
  });

  it('lets OTEL_TRACES_SAMPLER override the code (so the app setting, not host.json, decides): a rate limit set there applies', () => {
    expect(resolvedSampling({ OTEL_TRACES_SAMPLER: 'microsoft.rate_limited', OTEL_TRACES_SAMPLER_ARG: '5' })).toEqual({ samplingRatio: 1, tracesPerSecond: 5 });
  });
});
