import { isServiceBusError } from '@azure/service-bus';
import type { ServiceBusClient, ServiceBusReceivedMessage } from '@azure/service-bus';

/**
 * Everything on a subscription, session-enabled or not, settled as it is read: for a session one,
 * each session in turn, until no session is left to accept.
 */
export async function drainAll(
  client: ServiceBusClient,
  topic: string,
  subscription: string,
  sessions: boolean,
  waitMs = 1000,
): Promise<ServiceBusReceivedMessage[]> {
  const received: ServiceBusReceivedMessage[] = [];
  if (!sessions) {
    const receiver = client.createReceiver(topic, subscription, { receiveMode: 'receiveAndDelete' });
    try {
      for (
        let batch = await receiver.receiveMessages(500, { maxWaitTimeInMs: waitMs });
        batch.length > 0;
        batch = await receiver.receiveMessages(500, { maxWaitTimeInMs: waitMs })
      )
        received.push(...batch);
    } finally {
      await receiver.close();
    }
    return received;
  }
  for (;;) {
    let receiver;
    try {
      receiver = await client.acceptNextSession(topic, subscription, { receiveMode: 'receiveAndDelete', maxAutoLockRenewalDurationInMs: 0 });
    } catch (error) {
      if (isServiceBusError(error) && (error.code === 'SessionCannotBeLocked' || error.code === 'ServiceTimeout')) return received;
      throw error;
    }
    try {
      // A session's messages are there when it is accepted: the first read gets them, a short one confirms the end.
      for (
        let batch = await receiver.receiveMessages(500, { maxWaitTimeInMs: 200 });
        batch.length > 0;
        batch = await receiver.receiveMessages(500, { maxWaitTimeInMs: 20 })
      )
        received.push(...batch);
    } finally {
      await receiver.close();
    }
  }
}
