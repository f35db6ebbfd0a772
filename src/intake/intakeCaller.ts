import type { CallerIdentityMode } from '../config.js';
import { problem } from './intakeResponse.js';
import type { IntakeResponse } from './intakeResponse.js';

/**
 * Whom the intake takes a caller to be (INTAKE_CALLER_IDENTITY, declared with the settings):
 * - `shared`: everyone who can reach the intake (with the function key) is one caller; the
 *   x-ms-client-principal* headers are ignored, since nothing stops a client from sending them.
 * - `entra`: the Entra ID principal that App Service authentication put in x-ms-client-principal.
 *   Only true behind Easy Auth, which strips any x-ms-client-principal* header a client sends and
 *   sets its own ("External requests aren't allowed to set these headers":
 *   https://learn.microsoft.com/azure/app-service/configure-authentication-user-identities).
 */
export type { CallerIdentityMode } from '../config.js';

/** The scope an Idempotency-Key and an order's claim belong to. */
export type IntakeCaller = { readonly kind: 'shared' } | { readonly kind: 'entra'; readonly objectId: string };

export const sharedCaller: IntakeCaller = { kind: 'shared' };

/** What records store as their caller: nothing for the shared scope (the records of earlier releases), `entra:<object id>` otherwise. */
export function callerScope(caller: IntakeCaller): string | undefined {
  return caller.kind === 'shared' ? undefined : `entra:${caller.objectId}`;
}

/** Easy Auth's principal header is a few KiB with a token's claims; past this it is not one. */
export const maxClientPrincipalHeaderLength = 32 * 1024;
/** An Entra object id is a GUID (36 characters); the bound leaves room for another provider's id. */
export const maxPrincipalIdLength = 128;

const objectIdClaimTypes = ['http://schemas.microsoft.com/identity/claims/objectidentifier', 'oid'];
const principalIdPattern = /^[\x21-\x7e]+$/;

/**
 * The caller of one request. With `entra`, the object id (`oid`) claim of x-ms-client-principal,
 * or x-ms-client-principal-id when the platform sent no claims; none of them is a 401 naming what
 * is missing (the request reached the worker unauthenticated: Easy Auth is off or lets it through).
 */
export function readIntakeCaller(headers: { get(name: string): string | null }, mode: CallerIdentityMode): IntakeCaller | IntakeResponse {
  if (mode === 'shared') return sharedCaller;
  const principal = headers.get('x-ms-client-principal');
  const found = principal === null ? principalIdHeader(headers.get('x-ms-client-principal-id')) : objectIdClaim(principal);
  if (typeof found !== 'string') return unauthenticated(found.reason);
  return { kind: 'entra', objectId: found.toLowerCase() };
}

function principalIdHeader(value: string | null): string | { reason: string } {
  if (value === null) return { reason: 'the request carries no x-ms-client-principal or x-ms-client-principal-id header' };
  return checkPrincipalId(value.trim(), 'x-ms-client-principal-id');
}

function objectIdClaim(header: string): string | { reason: string } {
  if (header.length > maxClientPrincipalHeaderLength) return { reason: `x-ms-client-principal is over ${maxClientPrincipalHeaderLength} characters` };
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(header, 'base64').toString('utf8'));
  } catch {
    return { reason: 'x-ms-client-principal is not base64-encoded JSON' };
  }
  const claims = (decoded as { claims?: unknown } | null)?.claims;
  if (!Array.isArray(claims)) return { reason: 'x-ms-client-principal has no claims array' };
  // Any JSON value may stand in the array: a null has no typ, and neither has a string or a number.
  const claim = (claims as ({ typ?: unknown; val?: unknown } | null)[]).find((c) => objectIdClaimTypes.includes(String(c?.typ)));
  if (typeof claim?.val !== 'string') return { reason: 'x-ms-client-principal has no object id (oid) claim' };
  return checkPrincipalId(claim.val.trim(), 'the oid claim of x-ms-client-principal');
}

function checkPrincipalId(value: string, where: string): string | { reason: string } {
  if (value.length === 0 || value.length > maxPrincipalIdLength || !principalIdPattern.test(value)) {
    return { reason: `${where} is not 1 to ${maxPrincipalIdLength} visible ASCII characters` };
  }
  return value;
}

function unauthenticated(reason: string): IntakeResponse {
  const detail = `this intake identifies callers by App Service authentication (INTAKE_CALLER_IDENTITY=entra), and ${reason}; call it with an Entra ID access token for the app`;
  return problem(401, 'caller-unauthenticated', 'No authenticated caller', detail, {}, { 'WWW-Authenticate': 'Bearer' });
}
