import { DefaultAzureCredential } from '@azure/identity';
import { ServiceBusClient } from '@azure/service-bus';
import type { ServiceBusSender } from '@azure/service-bus';

/** A copy of a message, to be delivered again later: what a delayed retry sends. */
export interface ScheduledCopy {
  readonly messageId: string;
  readonly body: string | Uint8Array;
  readonly subject?: string;
  readonly contentType?: string;
  readonly correlationId?: string;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
}

export interface RetryScheduler {
  /** Resolves once Service Bus has accepted the copy; the original may be completed only then. */
  schedule(copy: ScheduledCopy, enqueueAt: Date): Promise<void>;
  close(): Promise<void>;
}

export interface ServiceBusConnectionSettings {
  readonly connectionString?: string;
  readonly fullyQualifiedNamespace?: string;
  /** A user-assigned identity's client id (`ServiceBusConnection__clientId`). */
  readonly clientId?: string;
}

/** Which client the trigger's connection settings make: a connection string first, as the host does. */
export type ServiceBusClientChoice =
  | { readonly kind: 'connection-string'; readonly connectionString: string }
  | { readonly kind: 'managed-identity'; readonly fullyQualifiedNamespace: string; readonly managedIdentityClientId?: string };

export function chooseServiceBusClient(connection: ServiceBusConnectionSettings): ServiceBusClientChoice {
  const { connectionString, fullyQualifiedNamespace, clientId } = connection;
  if (connectionString) return { kind: 'connection-string', connectionString };
  if (fullyQualifiedNamespace) return { kind: 'managed-identity', fullyQualifiedNamespace, ...(clientId ? { managedIdentityClientId: clientId } : {}) };
  throw new Error('no Service Bus connection: set ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace');
}

/**
 * Schedules copies on the entity the trigger reads (a queue, or a subscription's topic), through the trigger's own connection settings:
 * a connection string locally, the namespace and the managed identity in Azure. The client is made
 * on first use, so a consumer that never needs a delayed retry never connects.
 */
export class ServiceBusRetryScheduler implements RetryScheduler {
  private client?: ServiceBusClient;
  private sender?: ServiceBusSender;

  constructor(
    private readonly connection: ServiceBusConnectionSettings,
    /** The queue the trigger reads, or the topic of the subscription it reads. */
    private readonly entityName: string,
    /**
     * For a subscription: the copy's `to`, which the subscriptions' rules route on (infra/servicebus-queues.json),
     * so a retry reaches the one subscriber that failed and not every subscriber of the topic.
     */
    private readonly to?: string,
  ) {}

  async schedule(copy: ScheduledCopy, enqueueAt: Date): Promise<void> {
    await this.senderOf().scheduleMessages(
      {
        messageId: copy.messageId,
        body: copy.body,
        subject: copy.subject,
        contentType: copy.contentType,
        correlationId: copy.correlationId,
        to: this.to,
        applicationProperties: { ...copy.applicationProperties },
      },
      enqueueAt,
    );
  }

  async close(): Promise<void> {
    await this.client?.close();
  }

  private senderOf(): ServiceBusSender {
    if (this.sender) return this.sender;
    const choice = chooseServiceBusClient(this.connection);
    this.client =
      choice.kind === 'connection-string'
        ? new ServiceBusClient(choice.connectionString)
        : new ServiceBusClient(choice.fullyQualifiedNamespace, new DefaultAzureCredential({ managedIdentityClientId: choice.managedIdentityClientId }));
    this.sender = this.client.createSender(this.entityName);
    return this.sender;
  }
}
