import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';
import { closeServer } from '../emulator-kit/httpServers.js';
import { errorBody, feed, queueEntry, ruleEntry, subscriptionEntry, topicEntry } from './administrationAtom.js';
import type { AtomContext } from './administrationAtom.js';
import { sasRefusal } from './cbsTokens.js';
import type { SharedAccessKeys } from './cbsTokens.js';
import type { QueueSettings, TopicSettings } from './entityTypes.js';
import type { SubscriptionRule } from './subscriptionRules.js';

/** What the administration API reads: the emulator's entities as they are now (rules change through the rule manager). */
export interface AdministeredEntities {
  queueNames(): string[];
  queue(name: string): QueueSettings | undefined;
  topicNames(): string[];
  topic(name: string): AdministeredTopic | undefined;
}

export interface AdministeredTopic {
  readonly settings: TopicSettings;
  readonly subscriptions: ReadonlyMap<string, { readonly settings: QueueSettings; readonly rules: readonly SubscriptionRule[] }>;
}

export interface AdministrationEndpoint {
  readonly port: number;
  /** PEM of the self-signed certificate HTTPS is served with (CN and IP 127.0.0.1, DNS localhost), for a client to trust. */
  readonly caCertificate: string;
  close(): Promise<void>;
}

const tlsHandshake = 0x16;

/**
 * One port, as Microsoft's emulator has 5300 for both: `GET /health`, and the READ side of Service
 * Bus's administration REST API (ATOM XML; a request to it always carries `api-version`). Both
 * plain HTTP and HTTPS are answered on it, told apart by the first byte: Microsoft's emulator and
 * the clients that know `UseDevelopmentEmulator=true` (Azure.Messaging.ServiceBus, and
 * `@azure/service-bus` from 7.10.0-beta.2) speak HTTP there; `@azure/service-bus` 7.9.5, which this
 * project pins, always sends `https://<Endpoint host:port>/...`.
 */
export async function serveAdministration(port: number, host: string, entities: AdministeredEntities, keys: SharedAccessKeys): Promise<AdministrationEndpoint> {
  const tls = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const handle = (secure: boolean) => (req: IncomingMessage, res: ServerResponse) => answer(req, res, { secure, startedAt, entities, keys });
  const plain = createHttpServer(handle(false));
  const secure = createHttpsServer({ cert: tls.cert, key: tls.private }, handle(true));
  const sockets = new Set<Socket>();
  const listener = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      (first[0] === tlsHandshake ? secure : plain).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `the Service Bus emulator's health and administration endpoint cannot listen on port ${port}: it is in use (Microsoft's Service Bus emulator?)`,
            )
          : error,
      ),
    );
    listener.listen(port, host, () => resolve());
  });
  return {
    port: (listener.address() as AddressInfo).port,
    caCertificate: tls.cert,
    close: async () => {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await Promise.all([closeServer(plain), closeServer(secure), closed]);
    },
  };
}

interface RequestContext {
  readonly secure: boolean;
  readonly startedAt: string;
  readonly entities: AdministeredEntities;
  readonly keys: SharedAccessKeys;
}

function answer(req: IncomingMessage, res: ServerResponse, ctx: RequestContext): void {
  const url = new URL(req.url ?? '/', 'http://emulator');
  if (!url.searchParams.has('api-version')) {
    const healthy = req.method === 'GET' && url.pathname === '/health';
    res.writeHead(healthy ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(healthy ? { status: 'healthy' } : { error: `no route for ${req.method ?? ''} ${req.url ?? ''}` }));
    return;
  }
  const refusal = authorizationRefusal(req.headers.authorization, ctx.keys);
  if (refusal) return send(res, 401, errorBody(401, refusal));
  if (req.method !== 'GET') {
    return send(
      res,
      405,
      errorBody(
        405,
        `The emulator's administration API is read-only (${req.method ?? ''}): its entities come from infra/servicebus-queues.json or the emulator's options.`,
      ),
    );
  }
  const atomContext: AtomContext = { baseUrl: `${ctx.secure ? 'https' : 'http'}://${req.headers.host ?? '127.0.0.1'}`, startedAt: ctx.startedAt };
  const path = decodeURIComponent(url.pathname).replace(/^\/+/, '');
  const reply = read(path, ctx.entities, atomContext);
  send(res, reply.status, reply.body);
}

/** A shared access signature must be good; an Entra ID token (Bearer) cannot be checked here and is taken as it comes. */
function authorizationRefusal(header: string | undefined, keys: SharedAccessKeys): string | undefined {
  if (!header) return 'MissingToken: the request has no Authorization header.';
  if (/^Bearer\s/i.test(header)) return undefined;
  return sasRefusal(header, keys, Date.now());
}

const subscriptionPath = /^(.+)\/subscriptions(?:\/([^/]+)(\/rules(?:\/([^/]+))?)?)?\/?$/i;

function read(path: string, entities: AdministeredEntities, ctx: AtomContext): { status: number; body: string } {
  const ok = (body: string) => ({ status: 200, body });
  // Service Bus answers a GET of an entity that does not exist with 200 and an empty feed.
  const nothing = ok(feed(ctx, path, []));
  if (/^\$resources\/queues\/?$/i.test(path))
    return ok(
      feed(
        ctx,
        path,
        entities.queueNames().map((q) => queueEntry(ctx, q, entities.queue(q) as QueueSettings)),
      ),
    );
  if (/^\$resources\/topics\/?$/i.test(path)) {
    return ok(
      feed(
        ctx,
        path,
        entities.topicNames().map((t) => topicOf(entities, t, ctx) ?? ''),
      ),
    );
  }
  const match = subscriptionPath.exec(path);
  if (!match) {
    const queue = entities.queue(path);
    if (queue) return ok(queueEntry(ctx, path, queue));
    return ok(topicOf(entities, path, ctx) ?? feed(ctx, path, []));
  }
  const [, topicName = '', subscriptionName, rulesSegment, ruleName] = match;
  const topic = entities.topic(topicName);
  if (!topic) return { status: 404, body: errorBody(404, `The messaging entity '${topicName}' could not be found.`) };
  if (subscriptionName === undefined) {
    return ok(
      feed(
        ctx,
        path,
        [...topic.subscriptions].map(([name, s]) => subscriptionEntry(ctx, topicName, name, s.settings)),
      ),
    );
  }
  const subscription = topic.subscriptions.get(subscriptionName.toLowerCase());
  const listsRules = rulesSegment !== undefined && ruleName === undefined;
  if (!subscription)
    return listsRules || ruleName !== undefined
      ? { status: 404, body: errorBody(404, `The messaging entity '${topicName}/Subscriptions/${subscriptionName}' could not be found.`) }
      : nothing;
  if (listsRules)
    return ok(
      feed(
        ctx,
        path,
        subscription.rules.map((r) => ruleEntry(ctx, topicName, subscriptionName, r)),
      ),
    );
  if (ruleName === undefined) return ok(subscriptionEntry(ctx, topicName, subscriptionName, subscription.settings));
  const rule = subscription.rules.find((r) => r.name.toLowerCase() === ruleName.toLowerCase());
  return rule ? ok(ruleEntry(ctx, topicName, subscriptionName, rule)) : nothing;
}

function topicOf(entities: AdministeredEntities, name: string, ctx: AtomContext): string | undefined {
  const topic = entities.topic(name);
  return topic && topicEntry(ctx, name, topic.settings, topic.subscriptions.size);
}

function send(res: ServerResponse, status: number, body: string): void {
  const kind = body.startsWith('<entry') ? 'entry' : 'feed';
  res.writeHead(status, { 'content-type': status === 200 ? `application/atom+xml;type=${kind};charset=utf-8` : 'application/xml; charset=utf-8' });
  res.end(body);
}
