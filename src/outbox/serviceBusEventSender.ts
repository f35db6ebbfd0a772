import { DefaultAzureCredential } from '@azure/identity';
import { ServiceBusClient, isServiceBusError } from '@azure/service-bus';
import type { ServiceBusMessage, ServiceBusSender } from '@azure/service-bus';
import { chooseServiceBusClient } from '../servicebus/index.js';
import type { ServiceBusConnectionSettings } from '../servicebus/index.js';
import { TransientSendError } from './eventSender.js';
import type { EventSender, SendOutcome } from './eventSender.js';
import type { OutboxMessage } from './outboxDocument.js';

/**
 * Errors after which the same send can never succeed. Anything else, including UnauthorizedAccess
 * (a role assignment takes minutes to apply after a deployment), is worth trying again later.
 */
export function isRefusal(code: string | undefined): code is string {
  return code === 'MessagingEntityNotFound' || code === 'MessagingEntityDisabled' || code === 'MessageSizeExceeded';
}

/**
 * Sends outbox messages with as few round trips as the broker allows: one batch per destination,
 * split where it is full. A message too large for an empty batch is refused by name, without a
 * send, so it never holds back the others.
 */
export class ServiceBusEventSender implements EventSender {
  private client?: ServiceBusClient;
  private readonly senders = new Map<string, ServiceBusSender>();

  constructor(private readonly connection: ServiceBusConnectionSettings) {}

  async send(destination: string, messages: readonly OutboxMessage[]): Promise<readonly SendOutcome[]> {
    // Stryker disable next-line ArrayDeclaration: every index is filled below, so the preset length changes nothing
    const outcomes: SendOutcome[] = new Array<SendOutcome>(messages.length);
    try {
      const sender = this.senderFor(destination);
      let batch = await sender.createMessageBatch();
      let inBatch: number[] = [];
      const flush = async () => {
        if (inBatch.length === 0) return;
        await sender.sendMessages(batch);
        for (const i of inBatch) outcomes[i] = { kind: 'sent' };
        batch = await sender.createMessageBatch();
        inBatch = [];
      };
      for (const [i, message] of messages.entries()) {
        const wire = toServiceBusMessage(message);
        if (batch.tryAddMessage(wire)) {
          inBatch.push(i);
          continue;
        }
        await flush();
        if (batch.tryAddMessage(wire)) inBatch.push(i);
        else
          outcomes[i] = {
            kind: 'refused',
            reason: 'MessageSizeExceeded',
            detail: `the message is larger than ${batch.maxSizeInBytes} bytes, the most ${destination} accepts`,
          };
      }
      await flush();
    } catch (error) {
      const code = isServiceBusError(error) ? error.code : undefined;
      if (!isRefusal(code)) throw new TransientSendError(destination, error);
      const detail = (error as Error).message;
      for (let i = 0; i < messages.length; i += 1) outcomes[i] ??= { kind: 'refused', reason: code, detail };
    }
    return outcomes;
  }

  async close(): Promise<void> {
    await this.client?.close();
  }

  private senderFor(destination: string): ServiceBusSender {
    let sender = this.senders.get(destination);
    if (sender) return sender;
    this.client ??= connect(this.connection);
    sender = this.client.createSender(destination);
    this.senders.set(destination, sender);
    return sender;
  }
}

export function toServiceBusMessage(message: OutboxMessage): ServiceBusMessage {
  return {
    messageId: message.messageId,
    subject: message.subject,
    contentType: message.contentType,
    body: message.body,
    ...(message.sessionId === undefined ? {} : { sessionId: message.sessionId }),
    ...(message.correlationId === undefined ? {} : { correlationId: message.correlationId }),
    applicationProperties: { ...message.applicationProperties },
  };
}

function connect(connection: ServiceBusConnectionSettings): ServiceBusClient {
  const choice = chooseServiceBusClient(connection);
  // Stryker disable next-line ConditionalExpression: the identity path needs a Microsoft Entra token, not to be had here; which client is chosen is tested with chooseServiceBusClient
  if (choice.kind === 'connection-string') return new ServiceBusClient(choice.connectionString);
  // Stryker disable next-line ObjectLiteral: as above, the credential's options take effect only against Azure
  return new ServiceBusClient(choice.fullyQualifiedNamespace, new DefaultAzureCredential({ managedIdentityClientId: choice.managedIdentityClientId }));
}
