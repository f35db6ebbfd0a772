import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layerOf, renderLayers, selfTimeByLayer } from '../../../bench/profileLayers.js';
import type { CpuProfile } from '../../../bench/profileLayers.js';

const tiny = JSON.parse(readFileSync(join(__dirname, '../../fixtures/bench/tiny.cpuprofile'), 'utf8')) as CpuProfile;
const at = (url: string, functionName = 'f') => layerOf({ functionName, url });

describe('profileLayers: self time of a CPU profile by layer', () => {
  it("gives each sample the time to the next one (the last, to the profile's end) and sums it by its node's layer", () => {
    const totals = selfTimeByLayer(tiny);
    expect(Object.fromEntries([...totals].filter(([, ms]) => ms > 0))).toEqual({
      idle: 4,
      'functions host (metadata, invocation)': 1,
      'validation (src/orders schemas, zod)': 1,
      'fingerprint (canonical JSON)': 1,
      'store adapter (src/cosmos, @azure/cosmos)': 1,
      'garbage collector': 1,
      'node internals': 1,
    });
  });

  it('counts only the samples taken inside the windows given (ms on the clock the profile counts microseconds on)', () => {
    const totals = selfTimeByLayer(tiny, [
      [1004.5, 1006.5],
      [1009, 1009.5],
    ]);
    expect(Object.fromEntries([...totals].filter(([, ms]) => ms > 0))).toEqual({
      'validation (src/orders schemas, zod)': 1,
      'fingerprint (canonical JSON)': 1,
      'node internals': 1,
    });
  });

  it('classifies each layer by the script URL, the compiled app and the TypeScript sources alike', () => {
    expect(at('file:///app/emulators/functions-host/localFunctionsHost.ts')).toBe('functions host (metadata, invocation)');
    expect(at('file:///app/node_modules/@azure/functions/dist/azure-functions.js')).toBe('functions host (metadata, invocation)');
    expect(at('file:///app/dist/src/servicebus/envelope.js')).toBe('envelope (src/servicebus)');
    expect(at('file:///app/dist/src/orders/schemas.js')).toBe('validation (src/orders schemas, zod)');
    expect(at('file:///app/dist/src/orders/parseOrderMessage.js')).toBe('validation (src/orders schemas, zod)');
    expect(at('file:///app/node_modules/canonicalize/lib/canonicalize.js')).toBe('fingerprint (canonical JSON)');
    expect(at('file:///app/dist/src/consumer/consumerPipeline.js')).toBe('consumer (src/consumer, src/orders, src/idempotency)');
    expect(at('file:///app/dist/src/orders/placeOrder.js')).toBe('consumer (src/consumer, src/orders, src/idempotency)');
    expect(at('file:///app/dist/functions/processOrder.js')).toBe('consumer (src/consumer, src/orders, src/idempotency)');
    expect(at('file:///app/node_modules/@opentelemetry/sdk-metrics/build/src/index.js')).toBe('telemetry');
    expect(at('file:///app/dist/src/telemetry/outcomeMetrics.js')).toBe('telemetry');
    expect(at('file:///app/node_modules/applicationinsights/out/src/index.js')).toBe('telemetry');
    expect(at('file:///app/node_modules/@azure/functions-opentelemetry-instrumentation/dist/index.js')).toBe('telemetry');
    expect(at('file:///app/dist/src/cosmos/cosmosDocumentStore.js')).toBe('store adapter (src/cosmos, @azure/cosmos)');
    expect(at('file:///app/node_modules/@azure/service-bus/dist/commonjs/receiver.js')).toBe('broker client (@azure/service-bus, rhea)');
    expect(at('file:///app/node_modules/rhea/lib/link.js')).toBe('broker client (@azure/service-bus, rhea)');
    expect(at('file:///app/node_modules/rhea-promise/dist/lib/link.js')).toBe('broker client (@azure/service-bus, rhea)');
    expect(at('file:///app/node_modules/@azure/core-amqp/dist/index.js')).toBe('broker client (@azure/service-bus, rhea)');
    expect(at('file:///app/emulators/cosmos-emulator/cosmosStandIn.ts')).toBe('stand-ins (in process)');
    expect(at('file:///app/emulators/servicebus-emulator/messageEntity.ts')).toBe('stand-ins (in process)');
    expect(at('file:///app/node_modules/@vercel/cosmosdb-server/lib/index.js')).toBe('stand-ins (in process)');
    expect(at('file:///app/node_modules/tsx/dist/esm/index.mjs')).toBe('TypeScript loader (tsx)');
    expect(at('wasm://wasm/f757504a')).toBe('TypeScript loader (tsx)');
    expect(at('file:///app/node_modules/@azure/core-rest-pipeline/dist/index.js')).toBe('other libraries');
    expect(at('file:///app/bench/hostProcess.ts')).toBe('bench harness');
    expect(at('node:internal/timers')).toBe('node internals');
    expect(at('', '(program)')).toBe('node internals');
    expect(at('', '(garbage collector)')).toBe('garbage collector');
    expect(at('', '(idle)')).toBe('idle');
  });

  it('prints each layer with time, in ms and as a share of the time not idle', () => {
    expect(renderLayers('OrderPlaced, new (separate)', selfTimeByLayer(tiny))).toEqual([
      '  OrderPlaced, new (separate): 6 ms busy, 4 ms idle',
      `    ${'functions host (metadata, invocation)'.padEnd(52)}        1 ms  16.7 %`,
      `    ${'validation (src/orders schemas, zod)'.padEnd(52)}        1 ms  16.7 %`,
      `    ${'fingerprint (canonical JSON)'.padEnd(52)}        1 ms  16.7 %`,
      `    ${'store adapter (src/cosmos, @azure/cosmos)'.padEnd(52)}        1 ms  16.7 %`,
      `    ${'node internals'.padEnd(52)}        1 ms  16.7 %`,
      `    ${'garbage collector'.padEnd(52)}        1 ms  16.7 %`,
    ]);
  });
});
