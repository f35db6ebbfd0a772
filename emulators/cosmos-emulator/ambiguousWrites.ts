import type { IncomingMessage, ServerResponse } from 'node:http';
import isTrueHeader from '@vercel/cosmosdb-server/lib/true-header';

/** What a request to the data plane does, as a fault rule selects it. */
export type RequestKind = 'read' | 'query' | 'create' | 'upsert' | 'replace' | 'patch' | 'delete' | 'batch' | 'other';

/** The kinds that write: an ambiguous-write fault applies them and then loses their answer. */
export const writeKinds: readonly RequestKind[] = ['create', 'upsert', 'replace', 'patch', 'delete', 'batch'];

export function requestKind(req: IncomingMessage): RequestKind {
  const onDocuments = /\/docs(\/|$|\?)/.test(req.url ?? '');
  if (!onDocuments) return 'other';
  switch (req.method) {
    case 'GET':
      return 'read';
    case 'PUT':
      return 'replace';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    case 'POST':
      if (isTrueHeader(req, 'x-ms-cosmos-is-batch-request')) return 'batch';
      if (isTrueHeader(req, 'x-ms-documentdb-isquery') || req.headers['content-type'] === 'application/query+json') return 'query';
      return isTrueHeader(req, 'x-ms-documentdb-is-upsert') ? 'upsert' : 'create';
    default:
      return 'other';
  }
}

/**
 * The request goes on to be applied as usual; its answer never reaches the caller. With a status
 * code, the caller gets that status (408 or 503: "it may or may not have happened", as a gateway
 * timeout says) in place of the real answer; with 0, the connection is dropped after the write, as
 * a network failure between the service and the client would. Either way the write happened: the
 * ambiguous write every caller of a remote store must be ready for.
 */
export function loseAnswerAfterApplying(req: IncomingMessage, res: ServerResponse, statusCode: number): void {
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  res.end = ((..._args: unknown[]) => {
    if (statusCode === 0) {
      req.socket.destroy();
      return res;
    }
    for (const name of res.getHeaderNames()) if (name !== 'content-type' && name !== 'x-ms-activity-id') res.removeHeader(name);
    res.statusCode = statusCode;
    res.setHeader('content-type', 'application/json');
    return end(
      JSON.stringify({
        code: statusCode === 408 ? 'RequestTimeout' : 'ServiceUnavailable',
        message: `answer lost by the stand-in after the request was applied: ${statusCode}`,
      }),
    );
  }) as typeof res.end;
}
