import { createRequire } from 'node:module';

interface QueryPrototype {
  readonly code: string;
}

/**
 * The query library (`@zeit/cosmosdb-query`, loaded as the server library loads it) compiles every
 * SQL query to JavaScript that starts by copying the collection with
 * `$c.reduce(($, c) => [...$, { c }], [])`: each document copies the whole array built so far, so one
 * scan costs the square of the container's size. 20,000 documents took 3 s a query, and the
 * sweepers' queries then held the stand-in's process (which hosts the broker too in the local stack)
 * for whole minutes of a flood run: a cost of the stand-in, not of Cosmos DB, which serves them from
 * its index. The same copy in linear time: every query answers exactly as before.
 */
const quadraticCopy = /\$c\.reduce\(\(\$, (\w+)\) => typeof \1 !== "undefined" \? \[\.\.\.\$, \{\s*(\w+): \1\s*\}\] : \$, \[\]\)/g;

/** `FROM c` names each document `c`; `FROM root r` reads `root` and names it `r`. (A JOIN's own copy is left as it is: the app's queries have none.) */
export function linearScanOf(code: string): string {
  return code.replace(
    quadraticCopy,
    (_match, source: string, alias: string) => `$c.filter((${source}) => typeof ${source} !== "undefined").map((${source}) => ({ ${alias}: ${source} }))`,
  );
}

/** The query library exactly as the server library resolves it (it is the server's dependency, not ours). */
function queryLibrary(): { default: (sql: string) => QueryPrototype } {
  return createRequire(require.resolve('@vercel/cosmosdb-server/lib/account/items'))('@zeit/cosmosdb-query') as { default: (sql: string) => QueryPrototype };
}

let installed = false;

/** Rewrites every compiled query's copy once, for the whole process (idempotent). */
export function installLinearQueryScan(): void {
  if (installed) return;
  const prototype = Object.getPrototypeOf(queryLibrary().default('SELECT * FROM c')) as QueryPrototype;
  const descriptor = Object.getOwnPropertyDescriptor(prototype, 'code');
  const compile = descriptor?.get;
  if (!compile) throw new Error('@zeit/cosmosdb-query: Query.prototype.code is no longer a getter; the linear scan cannot be installed');
  Object.defineProperty(prototype, 'code', {
    ...descriptor,
    get(this: QueryPrototype) {
      return linearScanOf(compile.call(this) as string);
    },
  });
  installed = true;
}

/** The compiled JavaScript of a query, as the stand-in runs it: for the tests. */
export function compiledQuery(sql: string): string {
  return queryLibrary().default(sql).code;
}
