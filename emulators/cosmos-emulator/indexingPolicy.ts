/** The path Cosmos DB always leaves out of the index, and adds to every policy's excluded paths. */
const etagPath = '/"_etag"/?';

interface IndexingPolicyDefinition {
  indexingMode?: unknown;
  automatic?: unknown;
  includedPaths?: unknown;
  excludedPaths?: unknown;
  [field: string]: unknown;
}

/**
 * A container definition with the indexing policy Cosmos DB stores and returns: consistent and
 * automatic unless said otherwise, everything (`/*`) included when no path is, and `_etag` excluded
 * after the caller's own exclusions. The library stored the policy as sent, or none.
 */
export function withIndexingPolicyDefaults(container: Record<string, unknown>): Record<string, unknown> {
  const given = (typeof container.indexingPolicy === 'object' && container.indexingPolicy !== null ? container.indexingPolicy : {}) as IndexingPolicyDefinition;
  const included = Array.isArray(given.includedPaths) ? given.includedPaths : [];
  const excluded = Array.isArray(given.excludedPaths) ? (given.excludedPaths as { path?: unknown }[]) : [];
  const mode = typeof given.indexingMode === 'string' ? given.indexingMode.toLowerCase() : 'consistent';
  return {
    ...container,
    indexingPolicy: {
      ...given,
      indexingMode: mode,
      automatic: given.automatic ?? true,
      // A policy with indexing off indexes no path at all.
      includedPaths: mode === 'none' ? included : included.length > 0 ? included : [{ path: '/*' }],
      excludedPaths: mode === 'none' || excluded.some((p) => p.path === etagPath) ? excluded : [...excluded, { path: etagPath }],
    },
  };
}
