import type { TestProject } from 'vitest/node';
import { startCosmosStandIn } from '../../emulators/cosmos-emulator/cosmosStandIn.js';

declare module 'vitest' {
  export interface ProvidedContext {
    cosmosEndpoint: string;
    cosmosKey: string;
    /** A real account or the official emulator, from the environment the run started with, if any. */
    externalCosmos: { endpoint: string; key: string } | null;
  }
}

/** One in-memory Cosmos stand-in per test run on a free loopback port; each file uses its own containers. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const standIn = await startCosmosStandIn({ port: 0 });
  project.provide('cosmosEndpoint', standIn.endpoint);
  project.provide('cosmosKey', standIn.key);
  const { COSMOS_ENDPOINT: endpoint, COSMOS_KEY: key } = process.env;
  project.provide('externalCosmos', endpoint && key ? { endpoint, key } : null);
  return () => standIn.close();
}
