import { inject } from 'vitest';

/** Where a Cosmos DB contract suite runs: the stand-in always, and a real account or the official emulator when given. */
export interface CosmosTarget {
  readonly name: string;
  readonly endpoint: () => string;
  readonly key: () => string;
}

/** The targets of one suite; says out loud that the external one is skipped when COSMOS_ENDPOINT and COSMOS_KEY are not set. */
export function cosmosTargets(suite: string): CosmosTarget[] {
  const targets: CosmosTarget[] = [{ name: 'the local stand-in', endpoint: () => inject('cosmosEndpoint'), key: () => inject('cosmosKey') }];
  const external = inject('externalCosmos');
  if (external) targets.push({ name: `the account at ${external.endpoint}`, endpoint: () => external.endpoint, key: () => external.key });
  else console.log(`${suite} against a real account or the official emulator: skipped because COSMOS_ENDPOINT and COSMOS_KEY are not set`);
  return targets;
}
