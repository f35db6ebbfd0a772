import type { SetupSettings } from '../config.js';
import { compare, missing } from './checkResult.js';
import type { CheckResult } from './checkResult.js';
import { isPathIndexed, requiredIndexedPaths } from './indexedPaths.js';
import type { FoundIndexingPolicy } from './indexedPaths.js';

/** A container as Cosmos DB describes it (the fields of the SDK's ContainerDefinition the app depends on). */
export interface FoundContainer {
  readonly partitionKey?: { readonly paths?: readonly string[] };
  readonly defaultTtl?: number;
  readonly indexingPolicy?: FoundIndexingPolicy;
}

const recreate = 'a partition key is fixed when the container is created: create a new one and copy the data';

export function checkDatabase(settings: SetupSettings, exists: boolean): CheckResult[] {
  const subject = `database '${settings.cosmos.databaseName}'`;
  if (!exists) return [missing(subject, 'a database', 'create it, or set COSMOS_DATABASE to yours (the app cannot create it with an identity)')];
  return [{ status: 'ok', subject, property: 'exists', expected: 'a database', found: 'yes' }];
}

/**
 * The orders container: partitioned by /orderId (every write of an order is one batch in its
 * partition), TTL on with no default (-1: only documents with their own `ttl` expire, so markers
 * end and orders stay), and the paths the app's queries filter on indexed.
 */
export function checkOrdersContainer(settings: SetupSettings, found: FoundContainer | undefined): CheckResult[] {
  const subject = `container '${settings.cosmos.ordersContainerName}'`;
  if (!found)
    return [
      missing(
        subject,
        'a container partitioned by /orderId with defaultTtl -1',
        'create it (see docs/bring-your-own.md), or set COSMOS_ORDERS_CONTAINER to yours',
      ),
    ];
  const unindexed = requiredIndexedPaths.filter((p) => !isPathIndexed(found.indexingPolicy, p));
  const mode = found.indexingPolicy?.indexingMode?.toLowerCase() ?? 'consistent';
  return [
    partitionKey(subject, '/orderId', found),
    compare(
      subject,
      'default time-to-live',
      '-1 (on, no default: only documents with their own ttl expire)',
      describeTtl(found.defaultTtl),
      found.defaultTtl === -1,
      'set defaultTtl to -1 (it can be changed): inbox markers, rejection records and published outbox entries carry their own ttl',
    ),
    compare(
      subject,
      'indexing mode',
      'consistent',
      mode,
      mode === 'consistent',
      "set indexingMode to consistent: the sweepers' and the tool's queries read the index",
    ),
    compare(
      subject,
      'indexed paths',
      requiredIndexedPaths.join(' '),
      unindexed.length === 0 ? 'all indexed' : `not indexed: ${unindexed.join(' ')}`,
      unindexed.length === 0,
      "add them to the indexing policy's includedPaths (it can be changed; Cosmos DB re-indexes in the background): the sweepers, the shipment reconciler and the operator tool filter on them",
    ),
  ];
}

/** The outbox publisher's change feed trigger keeps its leases here; it requires /id as the partition key, and cannot create the container with an identity. */
export function checkLeasesContainer(settings: SetupSettings, found: FoundContainer | undefined): CheckResult[] {
  const subject = `container '${settings.cosmos.leasesContainerName}'`;
  if (!found)
    return [
      missing(
        subject,
        'a container partitioned by /id',
        "the outbox publisher's Cosmos DB trigger keeps its leases there and cannot create it with an identity: create it, or set COSMOS_LEASES_CONTAINER to yours",
      ),
    ];
  return [partitionKey(subject, '/id', found)];
}

function partitionKey(subject: string, path: string, found: FoundContainer): CheckResult {
  const paths = found.partitionKey?.paths ?? [];
  return compare(subject, 'partition key', path, paths.length ? paths.join(', ') : 'none', paths.length === 1 && paths[0] === path, recreate);
}

function describeTtl(ttl: number | undefined): string {
  if (ttl === undefined) return "off (no defaultTtl: documents' own ttl is ignored, so markers never expire)";
  if (ttl === -1) return '-1';
  return `${ttl} (every document expires after ${ttl} s, orders included)`;
}
