import { loadResubmitRetention } from '../config.js';
import { resubmitForcedReasonProperty } from './resubmitCopy.js';
import type { ResubmitPolicy } from './resubmitHorizon.js';

/** The help of `--force <reason>` on every command that resubmits. */
export const forceHelp = (what: string) =>
  `send even a ${what} whose inbox markers may have expired (older than INBOX_MARKER_TTL_SECONDS less the margin a copy needs); the reason is recorded on the copy (${resubmitForcedReasonProperty}) and in the report`;

/** The retention settings as the app reads them (same names, defaults and checks), and a forced send's reason. */
export function resubmitPolicyOf(io: { readonly env: Readonly<Record<string, string | undefined>> }, force: string | undefined): ResubmitPolicy {
  if (force !== undefined && (force.trim() === '' || force.length > 500))
    throw new Error('--force needs a reason of 1 to 500 characters: why the copy is safe to send (it is recorded on the copy)');
  return { retention: loadResubmitRetention(io.env), forceReason: force?.trim() };
}
