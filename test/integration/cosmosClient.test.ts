import { get, globalAgent } from 'node:https';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { CosmosDocumentStore, createCosmosClient } from '../../src/cosmos/index.js';
import { TransientStoreError } from '../../src/idempotency/index.js';
import { testCosmosClient } from '../support/cosmosTestContainer.js';

const client = testCosmosClient();
afterAll(() => client.dispose());

function plainHttpsGet(url: string): Promise<'answered' | string> {
  return new Promise((resolve) => {
    get(url, (res) => {
      res.resume();
      resolve('answered');
    }).on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('createCosmosClient', () => {
  it('reaches a loopback endpoint with a self-signed certificate through its own agent only', async () => {
    const { resource } = await client.getDatabaseAccount();
    expect(resource).toBeDefined();
    // The rest of the process still verifies certificates: a plain request to the same server fails.
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
    expect(globalAgent.options.rejectUnauthorized).not.toBe(false);
    expect(await plainHttpsGet(inject('cosmosEndpoint'))).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  it('turns a refused connection into a transient error, so the message is redelivered', async () => {
    const unreachable = createCosmosClient({ endpoint: 'https://127.0.0.1:9/', key: inject('cosmosKey') });
    const store = new CosmosDocumentStore(unreachable.database('d').container('c'));
    const error = await store.read('p', 'id').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientStoreError);
    expect((error as Error).message).toMatch(/ECONNREFUSED|connect/i);
    unreachable.dispose();
  }, 60_000);
});
