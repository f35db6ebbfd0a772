import type { IncomingMessage } from 'node:http';
import { requestKind } from './ambiguousWrites.js';
import { isChangeFeedRequest } from './changeFeed.js';

/** Requests the stand-in received, by container and kind: `orders read`, `leases replace`, `orders change-feed`; `- other` for account and database metadata. */
export type RequestTally = Readonly<Record<string, number>>;

/** What a request counts as: its container, and its kind (a change-feed read apart from a point read). */
export function tallyKey(req: IncomingMessage): string {
  const container = /\/colls\/([^/?]+)/.exec(req.url ?? '')?.[1];
  const kind = isChangeFeedRequest(req) ? 'change-feed' : requestKind(req);
  return `${container === undefined ? '-' : decodeURIComponent(container)} ${kind}`;
}

/** The requests between two tallies (what one stretch of a run cost), by key. */
export function tallySince(before: RequestTally, after: RequestTally): RequestTally {
  return Object.fromEntries(
    Object.entries(after)
      .map(([key, n]) => [key, n - (before[key] ?? 0)])
      .filter(([, n]) => (n as number) > 0),
  );
}
