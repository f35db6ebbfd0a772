import { Agent } from 'node:https';
import { CosmosClient } from '@azure/cosmos';
import type { CosmosClientOptions, PluginConfig } from '@azure/cosmos';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import type { CosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import { RequestChargeRecorder } from '../../dev/store/requestChargeRecorder.js';

// Against a real account the bench adds up x-ms-request-charge; the stand-in answers 1 RU for each
// item request, which is enough to check what is counted.
describe('RequestChargeRecorder', () => {
  let standIn: CosmosStandIn;
  beforeAll(async () => {
    standIn = await startCosmosStandIn({ port: 0 });
  });
  afterAll(() => standIn.close());

  it('adds the charge of every item request, failed ones included, and none of the metadata requests', async () => {
    const recorder = new RequestChargeRecorder();
    // As the bench's client for a real account takes it; the stand-in's self-signed certificate and own address need the rest.
    const options: CosmosClientOptions & { plugins: PluginConfig[] } = {
      endpoint: standIn.endpoint,
      key: standIn.key,
      agent: new Agent({ rejectUnauthorized: false }),
      connectionPolicy: { enableEndpointDiscovery: false },
      plugins: [recorder.plugin],
    };
    const client = new CosmosClient(options);
    const { database } = await client.databases.createIfNotExists({ id: 'charges' });
    const { container } = await database.containers.createIfNotExists({ id: 'orders', partitionKey: { paths: ['/orderId'] } });
    await container.items.create({ id: 'a', orderId: 'o' });
    await container.items.create({ id: 'a', orderId: 'o' }).catch(() => undefined);
    await container.item('missing', 'o').read();
    await container.items.batch([{ operationType: 'Create', resourceBody: { id: 'b', orderId: 'o' } }], 'o');
    expect(recorder.requestUnits).toBe(4);
    recorder.reset();
    expect(recorder.requestUnits).toBe(0);
    client.dispose();
  });
});
