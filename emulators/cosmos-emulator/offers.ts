import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import readJson from '@vercel/cosmosdb-server/lib/json';

/** Cosmos DB's throughput record of a container or database (`container.readOffer()`). */
export interface OfferResource {
  id: string;
  _rid: string;
  _self: string;
  _etag: string;
  _ts: number;
  offerType: 'Invalid';
  offerVersion: 'V2';
  /** The `_self` of the container or database it is for. */
  resource: string;
  offerResourceId: string;
  content:
    { offerThroughput: number; offerIsRUPerMinuteThroughputEnabled: false } | { offerThroughput: number; offerAutopilotSettings: { maxThroughput: number } };
}

/** What a container gets when nobody says: Cosmos DB's minimum manual throughput. */
const defaultThroughput = 400;

export class OfferProblem extends Error {
  override readonly name = 'OfferProblem';
}

/**
 * The offers of one account, kept by the `_self` of what they are for: a container made outside a
 * shared-throughput database gets one (400 RU/s unless `x-ms-offer-throughput` or
 * `x-ms-cosmos-offer-autopilot-settings` says otherwise), a database only when it is given
 * throughput. Deleting the container or database deletes its offer (nothing is kept for it).
 */
export class OfferBook {
  private readonly offers = new Map<string, OfferResource>();

  /** The offer for a container or database just created, or undefined when it has none. Throws OfferProblem for throughput Azure refuses. */
  created(
    resource: { _rid: string; _self: string },
    headers: IncomingMessage['headers'],
    kind: 'container' | 'database',
    databaseSelf?: string,
  ): OfferResource | undefined {
    const content = contentFrom(headers);
    if (!content && (kind === 'database' || (databaseSelf !== undefined && this.offers.has(databaseSelf)))) return undefined;
    // A resource id's alphabet: base64 with '-' for '/', which the SDK refuses in an id ("Id contains illegal chars").
    const rid = randomBytes(3).toString('base64').replace(/\//g, '-');
    const offer: OfferResource = {
      id: rid,
      _rid: rid,
      _self: `offers/${rid}/`,
      _etag: `"${randomBytes(8).toString('hex')}"`,
      _ts: Math.floor(Date.now() / 1000),
      offerType: 'Invalid',
      offerVersion: 'V2',
      resource: resource._self,
      offerResourceId: resource._rid,
      content: content ?? { offerThroughput: defaultThroughput, offerIsRUPerMinuteThroughputEnabled: false },
    };
    this.offers.set(resource._self, offer);
    return offer;
  }

  /** A container or database deleted: its offer goes, and a database's containers' offers with it. */
  deleted(self: string): void {
    for (const key of this.offers.keys()) if (key.startsWith(self)) this.offers.delete(key);
  }

  all(): OfferResource[] {
    return [...this.offers.values()];
  }

  byId(id: string): OfferResource | undefined {
    return this.all().find((o) => o.id === id);
  }

  replace(id: string, next: Partial<OfferResource>): OfferResource | undefined {
    const offer = this.byId(id);
    if (!offer) return undefined;
    const content = next.content as { offerThroughput?: unknown; offerAutopilotSettings?: { maxThroughput?: unknown } } | undefined;
    const replaced: OfferResource = {
      ...offer,
      _etag: `"${randomBytes(8).toString('hex')}"`,
      _ts: Math.floor(Date.now() / 1000),
      content: content?.offerAutopilotSettings
        ? {
            offerThroughput: autoscaleMax(content.offerAutopilotSettings.maxThroughput) / 10,
            offerAutopilotSettings: { maxThroughput: autoscaleMax(content.offerAutopilotSettings.maxThroughput) },
          }
        : { offerThroughput: manual(content?.offerThroughput), offerIsRUPerMinuteThroughputEnabled: false },
    };
    this.offers.set(offer.resource, replaced);
    return replaced;
  }
}

function contentFrom(headers: IncomingMessage['headers']): OfferResource['content'] | undefined {
  const manualHeader = headers['x-ms-offer-throughput'];
  const autoscaleHeader = headers['x-ms-cosmos-offer-autopilot-settings'];
  if (manualHeader !== undefined && autoscaleHeader !== undefined) throw new OfferProblem('Give either a manual throughput or autoscale settings, not both.');
  if (manualHeader !== undefined) return { offerThroughput: manual(Number(manualHeader)), offerIsRUPerMinuteThroughputEnabled: false };
  if (autoscaleHeader === undefined) return undefined;
  let settings: { maxThroughput?: unknown };
  try {
    settings = JSON.parse(String(autoscaleHeader)) as { maxThroughput?: unknown };
  } catch {
    throw new OfferProblem(`The autoscale settings are not JSON: ${String(autoscaleHeader)}`);
  }
  const max = autoscaleMax(settings.maxThroughput);
  return { offerThroughput: max / 10, offerAutopilotSettings: { maxThroughput: max } };
}

/** Manual throughput: at least 400 RU/s, in steps of 100. */
function manual(value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 400 || (value as number) % 100 !== 0) {
    throw new OfferProblem(`The offer throughput ${JSON.stringify(value)} is invalid: it must be at least 400 RU/s, in steps of 100.`);
  }
  return value as number;
}

/** Autoscale's maximum: at least 1000 RU/s, in steps of 1000. */
function autoscaleMax(value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 1000 || (value as number) % 1000 !== 0) {
    throw new OfferProblem(`The autoscale maximum throughput ${JSON.stringify(value)} is invalid: it must be at least 1000 RU/s, in steps of 1000.`);
  }
  return value as number;
}

/** The problem with a create's throughput headers, or undefined: checked before anything is created. */
export function throughputProblem(headers: IncomingMessage['headers']): string | undefined {
  try {
    contentFrom(headers);
    return undefined;
  } catch (error) {
    if (error instanceof OfferProblem) return error.message;
    throw error;
  }
}

/** True for `GET /offers`, `POST /offers` (a query), `GET` or `PUT /offers/{id}`. */
export function isOfferRequest(req: IncomingMessage): boolean {
  return /^\/offers(\/[^/]+)?\/?$/i.test((req.url ?? '').split('?')[0] ?? '');
}

export async function handleOfferRequest(book: OfferBook, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const id = /^\/offers\/([^/]+)\/?$/i.exec((req.url ?? '').split('?')[0] ?? '')?.[1];
  if (id === undefined && req.method === 'GET') return feed(book.all());
  if (id === undefined && req.method === 'POST') {
    const body = (await readJson(req)) as { query?: unknown; parameters?: { name: string; value: unknown }[] };
    const matching = offerQuery(String(body.query ?? ''), body.parameters ?? []);
    if (!matching) {
      res.statusCode = 400;
      return { code: 'BadRequest', message: `The stand-in answers offer queries on id, resource or offerResourceId (got ${JSON.stringify(body.query)}).` };
    }
    return feed(book.all().filter(matching));
  }
  const offer = id === undefined ? undefined : book.byId(decodeURIComponent(id));
  if (!offer) {
    req.resume();
    res.statusCode = 404;
    return { code: 'NotFound', message: `Entity with the specified id does not exist in the system. (offer ${id ?? ''})` };
  }
  if (req.method === 'GET') return offer;
  if (req.method === 'PUT') {
    try {
      return book.replace(offer.id, (await readJson(req)) as Partial<OfferResource>);
    } catch (error) {
      if (!(error instanceof OfferProblem)) throw error;
      res.statusCode = 400;
      return { code: 'BadRequest', message: error.message };
    }
  }
  req.resume();
  res.statusCode = 405;
  return { code: 'MethodNotAllowed', message: `${req.method ?? ''} is not allowed on an offer` };
}

function feed(offers: OfferResource[]): unknown {
  return { _rid: '', Offers: offers, _count: offers.length };
}

/** `SELECT * FROM root [WHERE root.<field> = "value" | 'value' | @name]`, the forms the SDK sends. */
function offerQuery(query: string, parameters: { name: string; value: unknown }[]): ((offer: OfferResource) => boolean) | undefined {
  const all = /^\s*select\s+\*\s+from\s+(\w+)\s*$/i.exec(query);
  if (all) return () => true;
  const match = /^\s*select\s+\*\s+from\s+(\w+)\s+where\s+(\w+)\.(id|resource|offerResourceId)\s*=\s*(?:"([^"]*)"|'([^']*)'|(@\w+))\s*$/i.exec(query);
  if (!match || match[1]?.toLowerCase() !== match[2]?.toLowerCase()) return undefined;
  const fields = { id: 'id', resource: 'resource', offerresourceid: 'offerResourceId' } as const;
  const field = fields[(match[3] ?? 'id').toLowerCase() as keyof typeof fields];
  const wanted = match[6] !== undefined ? parameters.find((p) => p.name === match[6])?.value : (match[4] ?? match[5]);
  return (offer) => offer[field] === wanted;
}
