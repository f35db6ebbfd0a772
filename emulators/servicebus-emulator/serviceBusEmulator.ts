import type { AddressInfo, Server, Socket } from 'node:net';
import Long from 'long';
import rhea from 'rhea';
import type { Connection, Container, Delivery, EventContext, Receiver, Sender, Session } from 'rhea';
import { serveAdministration } from './administrationEndpoint.js';
import type { AdministeredEntities } from './administrationEndpoint.js';
import { answerPutToken, defaultSharedAccessKeys } from './cbsTokens.js';
import type { SharedAccessKeys } from './cbsTokens.js';
import { deliveryTagFor, newLockToken } from './lockTokens.js';
import { handleManagementRequest, handleTopicManagementRequest } from './management.js';
import type { ManagementReply } from './management.js';
import { MessageEntity } from './messageEntity.js';
import { deadLetterInDeadLetterQueue, entityPath, hasUnusedCredit, lockLostDescription, notFound, settlementFor } from './amqpLinks.js';
import type { DispositionState, LinkInternals } from './amqpLinks.js';
import type { AmqpMessage, QueueSettings } from './entityTypes.js';
import type { StoredMessage } from './messageEntity.js';
import { azureDefaultQueueSettings, loadQueueFile, standardMaxMessageSizeBytes, toQueueSettings, toTopicConfig } from './queueDefinitions.js';
import type { TopicConfig } from './queueDefinitions.js';
import { TopicEntity } from './topicEntity.js';
import type { TopicSubscription } from './topicEntity.js';
import { handleRuleRequest } from './ruleManagement.js';
import { batchMessageFormat, encodeMessage, toWireMessage, unpackBatch } from './wireMessages.js';

const deadLetterSuffix = '/$deadletterqueue';
const sessionFilter = 'com.microsoft:session-filter';
/** .NET ticks (100 ns since 0001-01-01) as the 8 bytes of an AMQP long, as Service Bus sends lock times in attach properties. */
const ticksOf = (ms: number): Buffer => Buffer.from(Long.fromNumber(ms).multiply(10_000).add(Long.fromString('621355968000000000')).toBytesBE());
const debug = (...args: unknown[]) => {
  if (process.env.SERVICEBUS_EMULATOR_DEBUG) console.error('[servicebus-emulator]', ...args);
};
const managementSuffix = '/$management';

export interface ServiceBusEmulatorOptions {
  /** 5672 like Azure's AMQP port; 0 for any free port. */
  readonly port?: number;
  readonly host?: string;
  /** Queues by name; by default those of infra/servicebus-queues.json. */
  readonly queues?: Readonly<Record<string, QueueSettings>>;
  /** Topics by name, with their subscriptions; by default those of infra/servicebus-queues.json. */
  readonly topics?: Readonly<Record<string, TopicConfig>>;
  /** Shared access keys by name that signed tokens must use; `{ local: 'local' }` by default. */
  readonly sharedAccessKeys?: SharedAccessKeys;
  /**
   * Serve `GET /health` and the read side of the administration REST API on this port (0: any free
   * one), over HTTP and HTTPS, as Microsoft's emulator does on 5300, so that scripts and samples
   * that wait for it, and `ServiceBusAdministrationClient`'s reads, work unchanged. Off when unset.
   */
  readonly healthPort?: number;
}

export interface ServiceBusEmulator {
  readonly port: number;
  /** The port of `GET /health` and the administration API, when it was asked for. */
  readonly healthPort?: number;
  /** What `@azure/service-bus` and Azure.Messaging.ServiceBus accept for this emulator. */
  readonly connectionString: string;
  /**
   * For `ServiceBusAdministrationClient`: the connection string with the health port, as Microsoft's
   * emulator asks for its management operations. Undefined without `healthPort`.
   */
  readonly administrationConnectionString?: string;
  /** The PEM certificate the administration API's HTTPS is served with, for a client to trust. */
  readonly administrationCaCertificate?: string;
  /** A queue or subscription (or its `/$DeadLetterQueue`) for inspection; undefined if there is none. */
  entity(address: string): MessageEntity | undefined;
  /** A topic for inspection. */
  topic(name: string): TopicEntity | undefined;
  close(): Promise<void>;
}

/** How a stopped emulator ends its connections (rhea's server side and any client see the cause). */
class BrokerStoppedError extends Error {
  override readonly name = 'BrokerStoppedError';
  constructor() {
    super('the Service Bus emulator stopped');
  }
}

interface DeliveryRef {
  readonly entity: MessageEntity;
  readonly token: string;
}

/**
 * An AMQP 1.0 broker that the real Service Bus SDKs talk to as to Azure, with
 * `UseDevelopmentEmulator=true`: SASL ANONYMOUS, a CBS put-token accepted before every link,
 * entities addressed as `queue` and `queue/$DeadLetterQueue`, and `$management` request-response.
 * Development tool only: in memory, one process, queues only.
 */
export async function startServiceBusEmulator(options: ServiceBusEmulatorOptions = {}): Promise<ServiceBusEmulator> {
  const file = options.queues === undefined || options.topics === undefined ? entitiesFromFile() : undefined;
  const keys = options.sharedAccessKeys ?? defaultSharedAccessKeys;
  const broker = new Broker(options.queues ?? file?.queues ?? {}, options.topics ?? (options.queues === undefined ? (file?.topics ?? {}) : {}), keys);
  const port = await broker.listen(options.port ?? 5672, options.host ?? '127.0.0.1');
  const host = options.host ?? '127.0.0.1';
  const health =
    options.healthPort === undefined
      ? undefined
      : await serveAdministration(options.healthPort, host, broker.administered(), keys).catch(async (error: unknown) => {
          await broker.close();
          throw error;
        });
  const connectionStringTo = (p: number) => `Endpoint=sb://${host}:${p};SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true`;
  return {
    port,
    healthPort: health?.port,
    connectionString: connectionStringTo(port),
    administrationConnectionString: health && connectionStringTo(health.port),
    administrationCaCertificate: health?.caCertificate,
    entity: (address) => broker.entity(address),
    topic: (name) => broker.topic(name),
    close: async () => {
      await health?.close();
      await broker.close();
    },
  };
}

function maxMessageSizeOf(entity: { readonly settings: { readonly maxMessageSizeBytes?: number } }): number {
  return entity.settings.maxMessageSizeBytes ?? standardMaxMessageSizeBytes;
}

function entitiesFromFile(): { queues: Record<string, QueueSettings>; topics: Record<string, TopicConfig> } {
  const file = loadQueueFile();
  return {
    queues: Object.fromEntries(Object.entries(file.queues).map(([name, definition]) => [name, toQueueSettings(definition)])),
    topics: Object.fromEntries(Object.entries(file.topics).map(([name, definition]) => [name, toTopicConfig(definition)])),
  };
}

class Broker {
  private readonly entities = new Map<string, MessageEntity>();
  private readonly topics = new Map<string, TopicEntity>();
  /** Subscriptions take no sends: messages reach them through their topic. */
  private readonly subscriptionEntities = new Set<MessageEntity>();
  /** Each subscription's rules, for its rule manager. */
  private readonly subscriptionOf = new Map<MessageEntity, TopicSubscription>();
  private readonly consumers = new Map<MessageEntity, Sender[]>();
  /** The session each session receiver holds, by its link. */
  private readonly sessionOf = new WeakMap<Sender, { readonly entity: MessageEntity; readonly sessionId: string; readonly owner: string }>();
  private readonly deliveries = new WeakMap<Delivery, DeliveryRef>();
  private readonly pumpsScheduled = new Set<MessageEntity>();
  // No auto-accept: a send is accepted only once the emulator has taken it (or refused, with a reason).
  private readonly container: Container = rhea.create_container({ id: 'servicebus-emulator', autoaccept: false } as never);
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(
    queues: Readonly<Record<string, QueueSettings>>,
    topics: Readonly<Record<string, TopicConfig>>,
    private readonly sharedAccessKeys: SharedAccessKeys,
  ) {
    for (const [name, settings] of Object.entries(queues)) this.addQueue(name, settings);
    for (const [name, config] of Object.entries(topics)) this.addTopic(name, config);
    const c = this.container;
    // The JS SDK authenticates with SASL ANONYMOUS; the .NET client (the Functions host's) asks for
    // MSSBCBS, Service Bus's "I will put a token on $cbs" mechanism. Both are accepted as they come.
    const mechanisms = (c as unknown as { sasl_server_mechanisms: Record<string, unknown> & { enable_anonymous(): void } }).sasl_server_mechanisms;
    mechanisms.enable_anonymous();
    mechanisms.MSSBCBS = () => ({
      outcome: undefined as boolean | undefined,
      start(this: { outcome?: boolean }) {
        this.outcome = true;
      },
    });
    c.on('receiver_open', (ctx: EventContext) => this.onClientSenderAttached(ctx));
    c.on('sender_open', (ctx: EventContext) => this.onClientReceiverAttached(ctx));
    c.on('message', (ctx: EventContext) => this.onMessage(ctx));
    c.on('accepted', (ctx: EventContext) => this.onDisposition(ctx, 'accepted'));
    c.on('rejected', (ctx: EventContext) => this.onDisposition(ctx, 'rejected'));
    c.on('modified', (ctx: EventContext) => this.onDisposition(ctx, 'modified'));
    c.on('released', (ctx: EventContext) => this.onDisposition(ctx, 'released'));
    c.on('sender_close', (ctx: EventContext) => ctx.sender && this.dropConsumer(ctx.sender));
    c.on('disconnected', (ctx: EventContext) => this.dropConnection(ctx.connection));
    // A client that ends its connection (or an AMQP session) with its links still attached lets go of
    // them all: a session it held is free at once, as when its socket drops.
    c.on('connection_close', (ctx: EventContext) => this.dropConnection(ctx.connection));
    c.on('session_close', (ctx: EventContext) => ctx.session && this.dropSession(ctx.session));
    c.on('error', () => {});
  }

  entity(address: string): MessageEntity | undefined {
    return this.entities.get(entityPath(address));
  }

  topic(address: string): TopicEntity | undefined {
    return this.topics.get(entityPath(address));
  }

  /** The entities as the administration API reads them: queues (not subscriptions or dead-letter queues) and topics. */
  administered(): AdministeredEntities {
    const isQueue = (e: MessageEntity) => !this.subscriptionEntities.has(e) && !e.name.endsWith(deadLetterSuffix);
    return {
      queueNames: () => [...this.entities.values()].filter(isQueue).map((e) => e.name),
      queue: (name) => {
        const entity = this.entity(name);
        return entity && isQueue(entity) ? entity.settings : undefined;
      },
      topicNames: () => [...this.topics.keys()],
      topic: (name) => {
        const topic = this.topic(name);
        if (!topic) return undefined;
        const subscriptions = new Map([...topic.subscriptions].map(([key, s]) => [key, { settings: s.entity.settings, rules: s.rules }]));
        return { settings: topic.settings, subscriptions };
      },
    };
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      // Nagle off: the SDKs never set TCP_NODELAY and small frames would wait 40 ms each.
      const server = this.container.listen({ port, host, tcp_no_delay: true } as never) as unknown as Server;
      this.server = server;
      server.on('connection', (socket: Socket) => {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
      });
      server.once('error', reject);
      server.once('listening', () => resolve((server.address() as AddressInfo).port));
    });
  }

  async close(): Promise<void> {
    for (const entity of this.entities.values()) entity.close();
    const server = this.server;
    if (!server) return;
    // A stopped broker drops its clients, as a process that exits does; close() must not wait on them.
    // Destroyed with an error: rhea watches a socket's 'error' and 'end', never 'close', and a
    // connection it is not told of keeps its heartbeat timer, which keeps the process alive.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy(new BrokerStoppedError());
    await closed;
  }

  private addQueue(name: string, settings: QueueSettings): MessageEntity {
    const key = name.toLowerCase();
    const queue = new MessageEntity(key, settings, (e) => this.schedulePump(e));
    queue.onSessionLockLost = (sessionId, owner) => this.detachSessionReceiver(queue, sessionId, owner);
    const dlqSettings = { ...azureDefaultQueueSettings, lockDurationMs: settings.lockDurationMs, duplicateDetectionWindowMs: 0 };
    queue.deadLetterQueue = new MessageEntity(key + deadLetterSuffix, dlqSettings, (e) => this.schedulePump(e), false);
    this.entities.set(key, queue);
    this.entities.set(key + deadLetterSuffix, queue.deadLetterQueue);
    return queue;
  }

  /** A topic, and each subscription as a queue at `topic/Subscriptions/name` with its own dead-letter queue. */
  private addTopic(name: string, config: TopicConfig): void {
    const topic = new TopicEntity(name.toLowerCase(), config.settings);
    for (const [subName, sub] of Object.entries(config.subscriptions)) {
      const entity = this.addQueue(`${name}/subscriptions/${subName}`, sub.settings);
      this.subscriptionEntities.add(entity);
      const subscription: TopicSubscription = { name: subName, entity, rules: [...sub.rules] };
      this.subscriptionOf.set(entity, subscription);
      topic.addSubscription(subscription);
    }
    this.topics.set(topic.name, topic);
  }

  /** A client sender attached: our receiver for an entity, for `$cbs`, or for a `$management` node. */
  private onClientSenderAttached(ctx: EventContext): void {
    const receiver = ctx.receiver as Receiver;
    const link = receiver as unknown as LinkInternals;
    const address = link.remote.attach.target?.address ?? '';
    debug('client sender attached', address);
    receiver.set_target({ address });
    // The sender decides how its deliveries settle and Service Bus answers with the same modes. The
    // .NET client adopts the answer: told "mixed" on its pre-settled management link, it tracks each
    // request by its (empty) delivery tag, and two requests in flight collide in its unsettled map.
    link.local.attach.snd_settle_mode = link.remote.attach.snd_settle_mode;
    link.local.attach.rcv_settle_mode = link.remote.attach.rcv_settle_mode;
    link.local.attach.max_message_size = 1024 * 1024;
    if (address === '$cbs' || address.toLowerCase().endsWith(managementSuffix)) return;
    const topic = this.topic(address);
    if (topic) {
      link.local.attach.max_message_size = maxMessageSizeOf(topic);
      return;
    }
    const entity = this.entity(address);
    if (!entity) return notFound(receiver, address);
    // The SDKs size their batches by the link's limit; a larger single send is refused in onMessage.
    link.local.attach.max_message_size = maxMessageSizeOf(entity);
    if (this.subscriptionEntities.has(entity)) {
      receiver.close({ condition: 'amqp:not-allowed', description: `Cannot send to the subscription ${address}: send to its topic.` });
    } else if (entity.name.endsWith(deadLetterSuffix)) {
      receiver.close({ condition: 'amqp:not-allowed', description: `Cannot send to the dead-letter queue ${address}.` });
    }
  }

  /** A client receiver attached: our sender for an entity's messages or for management replies. */
  private onClientReceiverAttached(ctx: EventContext): void {
    const sender = ctx.sender as Sender;
    const link = sender as unknown as LinkInternals;
    const remote = link.remote.attach;
    const address = remote.source?.address ?? '';
    debug('client receiver attached', address, JSON.stringify(remote.target));
    sender.set_source({ address });
    if (remote.target) sender.set_target({ address: remote.target.address ?? '' });
    link.local.attach.snd_settle_mode = remote.snd_settle_mode; // 1: receive-and-delete (pre-settled)
    link.local.attach.rcv_settle_mode = remote.rcv_settle_mode; // 1: peek-lock, settled second
    if (address === '$cbs' || address.toLowerCase().endsWith(managementSuffix)) return;
    if (this.topic(address)) {
      sender.close({ condition: 'amqp:not-allowed', description: `Cannot receive from the topic ${address}: receive from one of its subscriptions.` });
      return;
    }
    const entity = this.entity(address);
    if (!entity) return notFound(sender, address);
    if (!this.attachSession(entity, sender, address, remote.source?.filter)) return;
    this.consumers.set(entity, [...(this.consumers.get(entity) ?? []), sender]);
    sender.on('sendable', () => this.schedulePump(entity));
    sender.on('sender_draining', () => {
      this.pump(entity);
      sender.set_drained(true);
    });
    // rhea echoes drain=true only while credit remains; when a delivery used the last credit during a
    // drain, the SDK never hears "drained" and closes its link. Spend the credit and answer drained.
    link._get_drain = function getDrain(this: LinkInternals) {
      if (!(this._draining && this._drained)) return false;
      while (this.credit) {
        this.delivery_count += 1;
        this.credit -= 1;
      }
      this._drained = false;
      return true;
    };
  }

  /**
   * A receiver on a session-enabled entity names a session (`com.microsoft:session-filter`) or asks
   * for the next one (the filter with no value); the attach answers with the session it got and
   * `com.microsoft:locked-until-utc` (.NET ticks), or is refused with session-cannot-be-locked.
   * False when the link was closed.
   */
  private attachSession(entity: MessageEntity, sender: Sender, address: string, filter: Record<string, unknown> | undefined): boolean {
    const wantsSession = filter !== undefined && sessionFilter in filter;
    if (!entity.sessions) {
      if (!wantsSession) return true;
      sender.close({
        condition: 'amqp:not-allowed',
        description: `It is not possible for an entity that does not require sessions to create a sessionful message receiver (${address}).`,
      });
      return false;
    }
    if (!wantsSession) {
      sender.close({
        condition: 'amqp:not-allowed',
        description: `It is not possible for an entity that requires sessions to create a non-sessionful message receiver (${address}).`,
      });
      return false;
    }
    const requested = filter[sessionFilter];
    const owner = `${sender.connection.container_id}/${sender.name}/${newLockToken()}`;
    const accepted = entity.sessions.accept(typeof requested === 'string' ? requested : undefined, owner);
    if (!accepted) {
      sender.close({
        condition: 'com.microsoft:session-cannot-be-locked',
        description:
          typeof requested === 'string'
            ? `The requested session '${requested}' cannot be accepted. It may be locked by another receiver.`
            : 'No unlocked session is available.',
      });
      return false;
    }
    sender.set_source({ address, filter: { [sessionFilter]: accepted.sessionId } } as never);
    (sender as unknown as LinkInternals).local.attach.properties = { 'com.microsoft:locked-until-utc': rhea.types.wrap_long(ticksOf(accepted.lockedUntilMs)) };
    this.sessionOf.set(sender, { entity, sessionId: accepted.sessionId, owner });
    return true;
  }

  private detachSessionReceiver(entity: MessageEntity, sessionId: string, owner: string): void {
    for (const sender of this.consumers.get(entity) ?? []) {
      const held = this.sessionOf.get(sender);
      if (held?.sessionId !== sessionId || held.owner !== owner) continue;
      this.dropConsumer(sender);
      sender.close({
        condition: 'com.microsoft:session-lock-lost',
        description: `The session lock has expired on the MessageSession '${sessionId}'. Accept a new MessageSession.`,
      });
    }
  }

  private onMessage(ctx: EventContext): void {
    const receiver = ctx.receiver as Receiver;
    const address = receiver.target?.address ?? '';
    const message = ctx.message as unknown as AmqpMessage;
    if (address === '$cbs' || address.toLowerCase().endsWith(managementSuffix)) ctx.delivery?.accept();
    if (address === '$cbs') {
      const properties = (message.application_properties ?? {}) as Record<string, unknown>;
      const request = { audience: String(properties.name ?? ''), tokenType: String(properties.type ?? ''), token: message.body };
      this.reply(
        ctx,
        message,
        answerPutToken(request, (path) => this.entity(path) !== undefined || this.topic(path) !== undefined, this.sharedAccessKeys),
        true,
      );
      return;
    }
    if (address.toLowerCase().endsWith(managementSuffix)) {
      const path = entityPath(address).slice(0, -managementSuffix.length);
      const entity = this.entity(path);
      const topic = this.topic(path);
      const subscription = entity && this.subscriptionOf.get(entity);
      const ruleReply =
        subscription && handleRuleRequest(message.application_properties?.operation, (message.body ?? {}) as Record<string, unknown>, subscription, path);
      const reply = ruleReply
        ? ruleReply
        : entity
          ? handleManagementRequest(
              message,
              entity,
              (token) => this.entityHoldingLock(token),
              (sessionId) => this.sessionHeldOnConnection(entity, sessionId, ctx.connection),
            )
          : topic
            ? handleTopicManagementRequest(message, topic)
            : { status: 404, condition: 'com.microsoft:entity-not-found', description: `No entity at ${address}` };
      this.reply(ctx, message, reply, false);
      return;
    }
    const entity = this.topic(address) ?? this.entity(address);
    if (!entity) {
      ctx.delivery?.reject({ condition: 'amqp:not-found', description: `The messaging entity '${address}' could not be found.` });
      return;
    }
    const format = (ctx as { format?: number }).format;
    const size = format === batchMessageFormat ? (ctx.message as unknown as Buffer).length : encodeMessage(message).length;
    const limit = maxMessageSizeOf(entity);
    if (size > limit) {
      ctx.delivery?.reject({
        condition: 'amqp:link:message-size-exceeded',
        description: `The received message (size: ${size} bytes) exceeds the limit (${limit} bytes) currently allowed on the link.`,
      });
      return;
    }
    const messages = format === batchMessageFormat ? unpackBatch(ctx.message as unknown as Buffer) : [message];
    if (entity instanceof MessageEntity && entity.sessions && messages.some((m) => typeof m.group_id !== 'string' || m.group_id === '')) {
      ctx.delivery?.reject({
        condition: 'amqp:not-allowed',
        description:
          'The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have session support enabled can only receive messages that have the SessionId set to a valid value.',
      });
      return;
    }
    for (const m of messages) entity.accept(m);
    ctx.delivery?.accept();
  }

  /** Session operations are allowed to the connection whose receiver holds the session. */
  private sessionHeldOnConnection(entity: MessageEntity, sessionId: string, connection: Connection): boolean {
    return (this.consumers.get(entity) ?? []).some((s) => s.connection === connection && this.sessionOf.get(s)?.sessionId === sessionId);
  }

  private entityHoldingLock(token: string): MessageEntity | undefined {
    for (const entity of this.entities.values()) if (entity.isLocked(token)) return entity;
    return undefined;
  }

  /**
   * `$cbs` answers with `status-code` (the CBS draft); `$management` with camelCase `statusCode`,
   * which the SDKs test literally (an empty peek must be 204, not 404).
   */
  private reply(ctx: EventContext, request: AmqpMessage, reply: ManagementReply, cbs: boolean): void {
    const address = (ctx.receiver as Receiver).target?.address;
    const replyTo = request.reply_to as string | undefined;
    const candidates: Sender[] = [];
    ctx.connection.each_link((l: Sender | Receiver) => {
      if (l.is_sender() && (l as Sender).source?.address === address) candidates.push(l as Sender);
    });
    const link = candidates.find((l) => ((l as unknown as LinkInternals).remote.attach.target?.address ?? l.name) === replyTo) ?? candidates[0];
    if (!link) return;
    // AMQP int, not rhea's default uint: the .NET client casts the status to Int32.
    const status = rhea.types.wrap_int(reply.status);
    const properties = cbs
      ? { 'status-code': status, 'status-description': reply.description ?? '' }
      : {
          statusCode: status,
          statusDescription: reply.description ?? '',
          ...(reply.condition ? { errorCondition: reply.condition } : {}),
        };
    link.send({ correlation_id: request.message_id as string, to: replyTo, body: reply.body, application_properties: properties } as never);
  }

  private schedulePump(entity: MessageEntity): void {
    if (this.pumpsScheduled.has(entity)) return;
    this.pumpsScheduled.add(entity);
    setImmediate(() => {
      this.pumpsScheduled.delete(entity);
      this.pump(entity);
    });
  }

  /** Hands available messages to the entity's receivers in turn, as far as their credit goes (a session receiver: its session's). */
  private pump(entity: MessageEntity): void {
    const consumers = this.consumers.get(entity) ?? [];
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const sender of consumers) {
        if (!hasUnusedCredit(sender)) continue;
        const sessionId = this.sessionOf.get(sender)?.sessionId;
        const m = entity.takeNextAvailable(sessionId);
        if (!m) {
          if (entity.sessions) continue;
          return;
        }
        this.deliver(entity, sender, m);
        progressed = true;
      }
    }
  }

  private deliver(entity: MessageEntity, sender: Sender, m: StoredMessage): void {
    if ((sender as unknown as LinkInternals).local.attach.snd_settle_mode === 1) {
      entity.remove(m);
      sender.send(toWireMessage(m) as never, deliveryTagFor(newLockToken()));
      return;
    }
    const lock = entity.lock(m);
    const delivery = sender.send(toWireMessage(m, lock) as never, deliveryTagFor(lock.token));
    this.deliveries.set(delivery, { entity, token: lock.token });
  }

  private onDisposition(ctx: EventContext, outcome: 'accepted' | 'rejected' | 'modified' | 'released'): void {
    const delivery = ctx.delivery;
    const ref = delivery && this.deliveries.get(delivery);
    if (!delivery || !ref) return;
    this.deliveries.delete(delivery);
    const state = (delivery as unknown as { remote_state?: DispositionState }).remote_state;
    const settled = ref.entity.settle(ref.token, settlementFor(outcome, state));
    // Echo a settled outcome so the SDK's settle promise resolves; never with an `error` (the JS SDK
    // rejects the promise for any echoed error, even com.microsoft:dead-letter). A settlement whose
    // lock is gone (expired, or settled already) is answered with message-lock-lost, a dead-letter
    // in a dead-letter queue with not-allowed.
    const outcomes = rhea.message as unknown as Record<'accepted' | 'rejected' | 'modified', (fields?: object) => { described(): unknown }>;
    const echo =
      settled === 'settled'
        ? outcome === 'rejected'
          ? outcomes.rejected({})
          : outcome === 'accepted'
            ? outcomes.accepted()
            : outcomes.modified({})
        : outcomes.rejected({
            error: settled === 'not-allowed' ? deadLetterInDeadLetterQueue : { condition: 'com.microsoft:message-lock-lost', description: lockLostDescription },
          });

    delivery.update(true, echo.described() as never);
    // In rcv-settle-mode "second" the SDK settles after our echo without another frame: rhea's session
    // buffer (2048 slots) would never free this one and delivery would stop. It is settled on both sides.
    (delivery as unknown as { remote_settled: boolean }).remote_settled = true;
  }

  private dropConsumer(sender: Sender): void {
    for (const [entity, senders] of this.consumers)
      this.consumers.set(
        entity,
        senders.filter((s) => s !== sender),
      );
    this.releaseSessionOf(sender);
  }

  private dropConnection(connection: Connection): void {
    for (const [entity, senders] of this.consumers) {
      for (const s of senders) if (s.connection === connection) this.releaseSessionOf(s);
      this.consumers.set(
        entity,
        senders.filter((s) => s.connection !== connection),
      );
    }
  }

  private dropSession(session: Session): void {
    for (const [entity, senders] of this.consumers) {
      for (const s of senders) if (s.session === session) this.releaseSessionOf(s);
      this.consumers.set(
        entity,
        senders.filter((s) => s.session !== session),
      );
    }
  }

  /** A session receiver that goes lets its session go: another receiver may accept it at once. */
  private releaseSessionOf(sender: Sender): void {
    const held = this.sessionOf.get(sender);
    if (!held) return;
    this.sessionOf.delete(sender);
    held.entity.releaseSession(held.sessionId, held.owner);
  }
}
