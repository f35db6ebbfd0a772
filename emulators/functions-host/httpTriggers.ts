import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RegisteredFunction } from './functionsCore.js';
import { invokeRegisteredFunction } from './hostInvocation.js';
import type { InvocationResult, RpcHttpRequest } from './hostInvocation.js';
import { closeServer } from '../emulator-kit/httpServers.js';
import { defaultRequestBodySizeLimitBytes } from './hostSettings.js';

export interface HttpListenerOptions {
  readonly port: number;
  readonly hostname?: string;
  /** host.json `extensions.http.routePrefix`; the host's default is `api`. */
  readonly routePrefix?: string;
  /** The platform's limit on a request body (FUNCTIONS_REQUEST_BODY_SIZE_LIMIT): see hostSettings.ts. */
  readonly maxRequestBodyBytes?: number;
  readonly onInvocation?: (fn: RegisteredFunction, result: InvocationResult) => void;
}

export interface HttpListener {
  /** `http://127.0.0.1:<port>/`: the routes are under `<url>api/`. */
  readonly url: string;
  readonly routes: readonly { functionName: string; methods: readonly string[]; route: string; authLevel: string }[];
  close(): Promise<void>;
}

interface Route {
  readonly fn: RegisteredFunction;
  readonly methods: readonly string[];
  readonly path: string;
  readonly authLevel: string;
}

/**
 * Serves HTTP-triggered functions as Core Tools does on `func start`: each on
 * `/<routePrefix>/<route>` (the function's name when it sets no route), only for its methods (any
 * other method, like an unknown path, is 404), the request passed to the worker as RpcHttp and the
 * response the library returns written back; a function that throws is a 500 with no body. Like
 * Core Tools, it does not check function keys: `authLevel` is enforced in Azure only.
 */
export async function startHttpListener(functions: readonly RegisteredFunction[], options: HttpListenerOptions): Promise<HttpListener> {
  const prefix = (options.routePrefix ?? 'api').replace(/^\/|\/$/g, '');
  const routes: Route[] = functions.flatMap((fn) => {
    const trigger = Object.values(fn.metadata.bindings).find((b) => b.type === 'httpTrigger');
    if (!trigger) return [];
    const route = String(trigger.route ?? fn.metadata.name).replace(/^\/|\/$/g, '');
    if (route.includes('{')) throw new Error(`${fn.metadata.name}: route parameters ({name}) are not supported by the local host`);
    const methods = Array.isArray(trigger.methods)
      ? trigger.methods.map((m) => String(m).toUpperCase())
      : ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
    return [{ fn, methods, path: `/${prefix ? `${prefix}/` : ''}${route}`.toLowerCase(), authLevel: String(trigger.authLevel ?? 'function') }];
  });
  const server = createServer((req, res) => {
    serve(req, res, routes, options).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
      console.error(`local host: HTTP request failed: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.hostname ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.hostname ?? '127.0.0.1'}:${port}/`,
    routes: routes.map((r) => ({ functionName: r.fn.metadata.name, methods: r.methods, route: r.path, authLevel: r.authLevel })),
    close: () => closeServer(server),
  };
}

async function serve(req: IncomingMessage, res: ServerResponse, routes: readonly Route[], options: HttpListenerOptions): Promise<void> {
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
  const method = (req.method ?? 'GET').toUpperCase();
  // Routes match case-insensitively, as ASP.NET routing does; a method the function does not accept is no match.
  const route = routes.find((r) => r.path === url.pathname.replace(/\/$/, '').toLowerCase() && r.methods.includes(method));
  const body = await readBodyWithin(req, options.maxRequestBodyBytes ?? defaultRequestBodySizeLimitBytes);
  if (body === undefined) {
    refuseTooLarge(res);
    return;
  }
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  const http: RpcHttpRequest = {
    method,
    url: url.toString(),
    headers: flatHeaders(req),
    query: Object.fromEntries(url.searchParams),
    params: {},
    ...(method === 'GET' || method === 'HEAD' ? {} : { body: { bytes: body } }),
  };
  // As the host does: the invocation's activity is a child of the request's traceparent, when it has one.
  const result = await invokeRegisteredFunction(
    route.fn,
    { http },
    { Headers: { json: JSON.stringify(http.headers) }, Query: { json: JSON.stringify(http.query) } },
    http.headers.traceparent,
  );
  options.onInvocation?.(route.fn, result);
  if (result.error !== undefined) {
    res.writeHead(500).end();
    return;
  }
  const response = (result.returnValue as { http?: RpcHttpResponse } | undefined)?.http;
  if (!response) {
    // A handler that returns nothing (none of this app's does): answered as an empty 204.
    res.writeHead(204).end();
    return;
  }
  const bytes = response.body && 'bytes' in response.body ? Buffer.from(response.body.bytes) : Buffer.alloc(0);
  res.writeHead(Number(response.statusCode), { ...response.headers, 'Content-Length': String(bytes.length) });
  res.end(bytes);
}

/**
 * The body, or undefined once it is over the limit, however it is framed: a declared Content-Length
 * over it is refused unread, a chunked body as soon as its bytes cross it, as Kestrel does. What
 * follows is not kept (the socket is drained and closed after the answer), so a sender cannot make
 * the host buffer more than the limit.
 */
function readBodyWithin(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length <= maxBytes) chunks.push(chunk);
      else {
        req.off('data', onData).off('end', onEnd);
        resolve(undefined);
      }
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/**
 * Kestrel answers a body over MaxRequestBodySize with 413 and closes the connection; the function
 * never runs. (Through the Functions host the same refusal has been seen as a 500, the body read
 * failing while the host binds the request: azure-functions-host issue #10519.)
 */
function refuseTooLarge(res: ServerResponse): void {
  res.writeHead(413, { Connection: 'close', 'Content-Length': '0' }).end();
}

interface RpcHttpResponse {
  readonly statusCode: string;
  readonly headers: Record<string, string>;
  readonly body?: { bytes: Uint8Array } | { string: string };
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(
    Object.entries(req.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]])),
  );
}
