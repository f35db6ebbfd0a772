import { days } from './days.js';
import { documentLifetimeAtMost, oneOf, wholeNumber } from './settingKinds.js';

const callerIdentityModes = ['shared', 'entra'] as const;

/**
 * Whom the intake takes a caller to be (INTAKE_CALLER_IDENTITY): `shared`, everyone who reaches it
 * with the function key; `entra`, the principal App Service authentication names (src/intake/intakeCaller.ts).
 */
export type CallerIdentityMode = (typeof callerIdentityModes)[number];

/** The HTTP intake, POST /api/orders. */
export const intakeSettings = {
  INTAKE_MAX_BODY_BYTES: wholeNumber(
    { min: 256, default: 64 * 1024 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 'bytes',
      defaultNote: '64 KiB',
      description:
        'The largest order `POST /api/orders` accepts, as sent and as it is sent on to the queue (numbers written in full): 413 above it. At most `MAX_MESSAGE_BYTES`, so an accepted order can always be delivered.',
    },
  ),
  INTAKE_LEASE_SECONDS: wholeNumber(
    { min: 1, default: 10 },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      description:
        'How long a request holds its Idempotency-Key before a retry may take it over (a process that died before its batch). Copies meanwhile get 409 with `Retry-After: 1`. Safety does not depend on it: two requests that both reach the batch still publish one event.',
    },
  ),
  INTAKE_CLIENT_RETRY_HORIZON_SECONDS: wholeNumber(
    { min: 0, default: days(1) },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      defaultNote: '24 h',
      description: "How long clients may retry one request with the same key: the API's documented promise. Part of the key retention rule.",
    },
  ),
  INTAKE_KEY_RETENTION_SECONDS: wholeNumber(
    { min: 1, default: days(2), atMost: documentLifetimeAtMost() },
    {
      table: 'app',
      readBy: ['app'],
      unit: 's',
      defaultNote: '48 h',
      description:
        "TTL of an Idempotency-Key's record. Start-up refuses less than `INTAKE_CLIENT_RETRY_HORIZON_SECONDS + INTAKE_LEASE_SECONDS`. After it, the key may be used again for another order; a retry of the same order still gets its stored answer (from the order's claim, kept with the order). At most 2147483647 (Cosmos DB's largest ttl).",
    },
  ),
  // entra only behind App Service authentication: without it, x-ms-client-principal is whatever the client sent.
  INTAKE_CALLER_IDENTITY: oneOf(callerIdentityModes, 'shared', 'must be shared or entra (entra only with App Service authentication on: intakeAuthEnabled)', {
    table: 'app',
    readBy: ['app'],
    description:
      "Whom Idempotency-Keys and orders belong to. `shared`: every caller of the intake (anyone with the function key) is one scope, and `x-ms-client-principal*` headers are ignored. `entra`: the Entra ID principal App Service authentication names (the `oid` claim of `x-ms-client-principal`, else `x-ms-client-principal-id`): each principal has its own keys, and an order belongs to the principal that submitted it; a request without a principal is `401 caller-unauthenticated`. Set `entra` **only** with App Service authentication on (`intakeAuthEnabled`, which sets it): only then are those headers the platform's and not the client's.",
  }),
};
