import type { ServiceBusMessage, ServiceBusSender } from '@azure/service-bus';
import type { ParkedContext } from '../../src/cli/parkedCommands.js';
import type { orderFlow } from './orderFlowHarness.js';

/** The operator tool's parked-item context over an order flow's store and clock, its sends handed to `sendMessages`. */
export function parkedContext(t: ReturnType<typeof orderFlow>, sendMessages: (m: ServiceBusMessage) => Promise<void>): ParkedContext {
  return {
    store: t.store,
    sender: () => ({ sendMessages, close: async () => undefined }) as unknown as ServiceBusSender,
    keepSeconds: 3600,
    now: () => t.ctx.now().getTime(),
    out: { line: () => undefined, progress: () => undefined },
  };
}
