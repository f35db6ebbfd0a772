// `npm run bench -- --host --profile <dir>`: each consumer process's self time (the app's, the bare loop's) split by layer,
// from the V8 CPU profile node writes with --cpu-prof (a .cpuprofile: a call tree of nodes, each with
// its function's script URL, and the samples: which node ran, and the time since the previous sample).

/** The part of a .cpuprofile this reads. */
export interface CpuProfile {
  readonly nodes: readonly { readonly id: number; readonly callFrame: { readonly functionName: string; readonly url: string } }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The layers, in the order they are printed. */
export const layers = [
  'functions host (metadata, invocation)',
  'envelope (src/servicebus)',
  'validation (src/orders schemas, zod)',
  'fingerprint (canonical JSON)',
  'consumer (src/consumer, src/orders, src/idempotency)',
  'telemetry',
  'store adapter (src/cosmos, @azure/cosmos)',
  'broker client (@azure/service-bus, rhea)',
  'stand-ins (in process)',
  'other libraries',
  'TypeScript loader (tsx)',
  'bench harness',
  'node internals',
  'garbage collector',
  'idle',
] as const;
export type Layer = (typeof layers)[number];

const byUrl: readonly [RegExp, Layer][] = [
  [/\/emulators\/functions-host\/|\/node_modules\/@azure\/functions\//, 'functions host (metadata, invocation)'],
  [/\/emulators\/|\/dev\/local\/|\/node_modules\/@vercel\/cosmosdb-server\//, 'stand-ins (in process)'],
  [/\/src\/servicebus\//, 'envelope (src/servicebus)'],
  [/\/src\/orders\/(schemas|parseOrderMessage|orderMessages)\.|\/node_modules\/zod\//, 'validation (src/orders schemas, zod)'],
  [/\/src\/idempotency\/fingerprint\.|\/node_modules\/canonicalize\//, 'fingerprint (canonical JSON)'],
  [/\/src\/(consumer|orders|idempotency)\/|\/functions\//, 'consumer (src/consumer, src/orders, src/idempotency)'],
  [
    /\/node_modules\/(@opentelemetry|applicationinsights|@azure\/monitor-|@azure\/functions-opentelemetry|@azure\/opentelemetry|@microsoft\/applicationinsights)|\/src\/telemetry\//,
    'telemetry',
  ],
  [/\/src\/cosmos\/|\/node_modules\/@azure\/cosmos\//, 'store adapter (src/cosmos, @azure/cosmos)'],
  [/\/node_modules\/(@azure\/service-bus|@azure\/core-amqp|rhea|rhea-promise)\//, 'broker client (@azure/service-bus, rhea)'],
  [/\/node_modules\/(tsx|esbuild|@esbuild|@babel)\/|^wasm:/, 'TypeScript loader (tsx)'],
  [/\/bench\//, 'bench harness'],
  [/\/node_modules\//, 'other libraries'],
];

/** The layer of one profile node: by its function's script URL, or by V8's names for what is not script. */
export function layerOf(callFrame: { readonly functionName: string; readonly url: string }): Layer {
  if (callFrame.functionName === '(idle)') return 'idle';
  if (callFrame.functionName === '(garbage collector)') return 'garbage collector';
  const url = callFrame.url.replace(/\\/g, '/');
  return byUrl.find(([pattern]) => pattern.test(url))?.[1] ?? 'node internals';
}

/**
 * Self time per layer, in milliseconds. Sample i lasts from its own time to the next sample's (the
 * next delta; the last one to the profile's end), as Chrome's profiler reads them. With `windows`
 * (ms on the monotonic clock the profile's microseconds count on), only the samples taken inside one.
 */
export function selfTimeByLayer(profile: CpuProfile, windows?: readonly (readonly [number, number])[]): Map<Layer, number> {
  const layerOfNode = new Map(profile.nodes.map((n) => [n.id, layerOf(n.callFrame)]));
  const totals = new Map<Layer, number>(layers.map((l) => [l, 0]));
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  profile.samples.forEach((id, i) => {
    const time = times[i] ?? profile.startTime;
    if (windows && !windows.some(([from, to]) => time >= from * 1000 && time <= to * 1000)) return;
    const duration = (times[i + 1] ?? profile.endTime) - time;
    const layer = layerOfNode.get(id) ?? 'node internals';
    totals.set(layer, (totals.get(layer) ?? 0) + Math.max(0, duration) / 1000);
  });
  return totals;
}

/** The printed split: ms and the share of the time not idle, one line per layer that has any. */
export function renderLayers(title: string, totals: ReadonlyMap<Layer, number>): string[] {
  const busy = [...totals].filter(([layer]) => layer !== 'idle').reduce((n, [, ms]) => n + ms, 0);
  const lines = [`  ${title}: ${busy.toFixed(0)} ms busy, ${(totals.get('idle') ?? 0).toFixed(0)} ms idle`];
  for (const layer of layers) {
    const ms = totals.get(layer) ?? 0;
    if (layer === 'idle' || ms === 0) continue;
    lines.push(`    ${layer.padEnd(52)} ${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / Math.max(busy, 0.001)).toFixed(1).padStart(5)} %`);
  }
  return lines;
}
