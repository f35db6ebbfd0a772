import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Cosmos DB's data-plane RBAC for Entra ID tokens, as far as a role assignment's scope goes: a
 * principal whose role is scoped to one container reads that container's metadata and items, and the
 * account's (the SDK reads it first), but nothing above the container (the database's metadata, the
 * list of databases) and no other container. Cosmos DB answers those with 403, sub-status 5301, and
 * this message. A request with a token the stand-in was not told of is 401. Key-signed requests pass.
 */
export interface ScopedPrincipal {
  /** The principal's object id, as Cosmos DB names it in the 403. */
  readonly principalId: string;
  readonly database: string;
  readonly container: string;
}

/** Token (the `sig` of `type=aad`) -> whom it stands for. */
export type ScopedPrincipals = Readonly<Record<string, ScopedPrincipal>>;

export function refuseOutOfScope(principals: ScopedPrincipals | undefined, accountName: string, req: IncomingMessage, res: ServerResponse): boolean {
  if (!principals) return false;
  const authorization = decodeURIComponent(String(req.headers.authorization ?? ''));
  const fields = new URLSearchParams(authorization);
  if (fields.get('type') !== 'aad') return false;
  const principal = principals[fields.get('sig') ?? ''];
  const path = new URL(req.url ?? '/', 'https://stand-in').pathname.replace(/\/+$/, '');
  if (!principal) return answer(req, res, 401, 0, { code: 'Unauthorized', message: "The input authorization token can't serve the request." });
  const prefix = `/dbs/${principal.database}/colls/${principal.container}`;
  const inScope = path === '' || path === prefix || path.startsWith(`${prefix}/`);
  if (inScope && !(path === prefix && req.method !== 'GET')) return false;
  const action =
    req.method === 'GET' || (req.method === 'POST' && path.endsWith('/docs'))
      ? 'Microsoft.DocumentDB/databaseAccounts/readMetadata'
      : 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/write';
  const resource = path.replace(/^\//, '') || '/';
  return answer(req, res, 403, 5301, {
    code: 'Forbidden',
    message: `Request blocked by Auth ${accountName} : Request is blocked because principal [${principal.principalId}] does not have required RBAC permissions to perform action [${action}] on resource [${resource}]. Learn more: https://aka.ms/cosmos-native-rbac.`,
  });
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, subStatus: number, body: object): true {
  req.resume();
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.setHeader('x-ms-substatus', String(subStatus));
  res.setHeader('x-ms-activity-id', '00000000-0000-0000-0000-000000000000');
  res.end(JSON.stringify(body));
  return true;
}
