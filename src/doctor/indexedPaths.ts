/** An indexing policy as Cosmos DB returns it with a container's definition. */
export interface FoundIndexingPolicy {
  readonly indexingMode?: string;
  readonly includedPaths?: readonly { readonly path: string }[];
  readonly excludedPaths?: readonly { readonly path: string }[];
}

/**
 * The paths the app's queries filter on, as infra/modules/cosmos.bicep indexes them (a test keeps
 * the two equal): the parked-item sweeper, the outbox sweeper, the shipment reconciler's expired
 * leases and the operator tool. Nothing else needs an index; the consumer itself uses point reads.
 */
export const requiredIndexedPaths: readonly string[] = [
  '/docType/?',
  '/messageId/?',
  '/dedupKey/?',
  '/reason/?',
  '/rejectedAt/?',
  '/state/?',
  '/parkedAt/?',
  '/createdAt/?',
  '/leaseExpiresAt/?',
];

/**
 * Whether a scalar path (`/state/?`) is indexed under the policy: the most precise included or
 * excluded path that covers it decides, as in Cosmos DB (`/*` covers everything, `/a/*` all under
 * `/a`, `/a/?` the value of `/a` only). No policy, or no included path, means everything.
 */
export function isPathIndexed(policy: FoundIndexingPolicy | undefined, path: string): boolean {
  if (policy?.indexingMode?.toLowerCase() === 'none') return false;
  const included = policy?.includedPaths?.length ? policy.includedPaths : [{ path: '/*' }];
  const precisionOf = (paths: readonly { readonly path: string }[] | undefined) => Math.max(-1, ...(paths ?? []).map((p) => precision(p.path, path)));
  return precisionOf(included) > precisionOf(policy?.excludedPaths);
}

/** How precisely `pattern` covers `path`: -1 not at all, else the length of what it names. */
function precision(pattern: string, path: string): number {
  if (pattern === path) return pattern.length + 1;
  if (pattern.endsWith('/*') && path.startsWith(pattern.slice(0, -1))) return pattern.length - 1;
  return -1;
}
