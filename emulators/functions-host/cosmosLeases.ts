import type { Container, FeedRange } from '@azure/cosmos';

/**
 * One lease per feed range of the monitored container, kept in the leases container (partitioned
 * by /id, as the Functions host requires): who owns the range, since when, and where its last
 * checkpoint is. Writes are etag-guarded, so a takeover and a late checkpoint by the old owner
 * cannot both succeed. The shape follows the .NET change feed processor's lease documents
 * (`LeaseToken`, `ContinuationToken`, `Owner`, `timestamp`) so an operator recognises it; the
 * continuation itself is the JS SDK's token, so these leases are not interchangeable with the host's.
 */
export interface LeaseDocument {
  readonly id: string;
  readonly LeaseToken: string;
  readonly FeedRange: { readonly min: string; readonly max: string };
  readonly ContinuationToken: string | null;
  readonly Owner: string | null;
  readonly timestamp: string;
  readonly _etag?: string;
}

export class LeaseLostError extends Error {
  constructor(readonly leaseId: string) {
    super(`lease ${leaseId} was taken over or removed`);
    this.name = 'LeaseLostError';
  }
}

export interface LeaseStoreOptions {
  readonly leases: Container;
  /** `leaseContainerPrefix` + the monitored database and container: several triggers share one leases container. */
  readonly prefix: string;
  readonly owner: string;
  readonly expirationMs: number;
  readonly now?: () => number;
}

const statusOf = (error: unknown) => (error as { code?: number }).code;

export class LeaseStore {
  constructor(private readonly options: LeaseStoreOptions) {}

  idOf(range: FeedRange): string {
    return `${this.options.prefix}..${range.minInclusive}-${range.maxExclusive}`;
  }

  /** Takes the range's lease if it is free or has expired; undefined while another owner keeps it alive. */
  async tryAcquire(range: FeedRange): Promise<LeaseDocument | undefined> {
    const id = this.idOf(range);
    const now = this.options.now?.() ?? Date.now();
    const { resource: existing } = await this.options.leases.item(id, id).read<LeaseDocument>();
    if (!existing) {
      const fresh: LeaseDocument = {
        id,
        LeaseToken: `${range.minInclusive}-${range.maxExclusive}`,
        FeedRange: { min: range.minInclusive, max: range.maxExclusive },
        ContinuationToken: null,
        Owner: this.options.owner,
        timestamp: new Date(now).toISOString(),
      };
      try {
        const { resource } = await this.options.leases.items.create(fresh);
        return resource as LeaseDocument;
      } catch (error) {
        if (statusOf(error) === 409) return undefined; // another instance created it first
        throw error;
      }
    }
    const expired = Date.parse(existing.timestamp) + this.options.expirationMs <= now;
    if (existing.Owner && existing.Owner !== this.options.owner && !expired) return undefined;
    try {
      return await this.replace(existing, { Owner: this.options.owner });
    } catch (error) {
      if (error instanceof LeaseLostError) return undefined;
      throw error;
    }
  }

  renew(lease: LeaseDocument): Promise<LeaseDocument> {
    return this.replace(lease, {});
  }

  checkpoint(lease: LeaseDocument, continuation: string): Promise<LeaseDocument> {
    return this.replace(lease, { ContinuationToken: continuation });
  }

  async release(lease: LeaseDocument): Promise<void> {
    try {
      await this.replace(lease, { Owner: null });
    } catch (error) {
      if (!(error instanceof LeaseLostError)) throw error;
    }
  }

  private async replace(lease: LeaseDocument, change: Partial<LeaseDocument>): Promise<LeaseDocument> {
    const now = this.options.now?.() ?? Date.now();
    const next = { ...lease, ...change, timestamp: new Date(now).toISOString() };
    try {
      const { resource } = await this.options.leases
        .item(lease.id, lease.id)
        .replace(next, { accessCondition: { type: 'IfMatch', condition: lease._etag ?? '' } });
      return resource as LeaseDocument;
    } catch (error) {
      if (statusOf(error) === 412 || statusOf(error) === 404) throw new LeaseLostError(lease.id);
      throw error;
    }
  }
}
