// One side of `npm run bench -- --host` (the app in the local Functions host, or the bare loop) in one
// layout: "separate", the stack in one child process and the consumer in another; "together", both in
// one child. Each side has its own stack. The bench reaches the stack as any client does: the orders
// queue with @azure/service-bus, the container with @azure/cosmos.
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusSender } from '@azure/service-bus';
import type { Container } from '@azure/cosmos';
import { createCosmosClient, CosmosDocumentStore } from '../src/cosmos/index.js';
import { createBenchConsumer } from './consumerScenarios.js';
import type { Consume } from './consumerScenarios.js';
import { startHostChild } from './hostChild.js';
import type { HostChild } from './hostChild.js';

export type SideName = 'app' | 'bare';
export type Layout = 'separate' | 'together';

export interface Side {
  readonly name: SideName;
  readonly layout: Layout;
  /** The process that runs the stack (the consumer's own in the "together" layout). */
  readonly stack: HostChild;
  readonly consumer: HostChild;
  readonly container: Container;
  readonly bus: ServiceBusClient;
  readonly sender: ServiceBusSender;
  /** The consumer in this process, on this side's store: how the app's side prepares its state. */
  readonly consume: Consume;
  readonly queue: string;
  close(): Promise<void>;
}

/** `profileDir`: the consumer's process runs with --cpu-prof into it. */
export async function startSide(name: SideName, layout: Layout, profileDir?: string): Promise<Side> {
  const nodeOptions = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const started: HostChild[] = [];
  try {
    let stack: HostChild;
    let consumer: HostChild;
    let settings: Readonly<Record<string, string>>;
    if (layout === 'separate') {
      const s = await startHostChild(['--stack'], {});
      started.push((stack = s.child));
      settings = s.ready.settings ?? {};
      started.push((consumer = (await startHostChild(['--consumer', name], settings, nodeOptions)).child));
    } else {
      const s = await startHostChild(['--stack', '--consumer', name], {}, nodeOptions);
      started.push((stack = consumer = s.child));
      settings = s.ready.settings ?? {};
    }
    const cosmos = createCosmosClient({ endpoint: settings.COSMOS_ENDPOINT ?? '', key: settings.COSMOS_KEY });
    const container = cosmos.database(settings.COSMOS_DATABASE ?? '').container(settings.COSMOS_ORDERS_CONTAINER ?? '');
    const bus = new ServiceBusClient(settings.ServiceBusConnection ?? '');
    const queue = settings.ORDERS_QUEUE_NAME ?? 'orders';
    return {
      name,
      layout,
      stack,
      consumer,
      container,
      bus,
      sender: bus.createSender(queue),
      consume: createBenchConsumer(new CosmosDocumentStore(container)),
      queue,
      async close() {
        await bus.close();
        cosmos.dispose();
        for (const child of new Set(started)) await child.quit();
      },
    };
  } catch (error) {
    for (const child of new Set(started)) await child.quit();
    throw error;
  }
}

/** Where the app's consumer profile of one path and layout goes: `<dir>/<path as a file name>-<layout>`. */
export const profileDirFor = (dir: string, path: string, layout: Layout): string =>
  join(dir, `${path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}-${layout}`);
