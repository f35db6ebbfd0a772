import { ServiceBusClient } from '@azure/service-bus';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { localContainer, localDatabase } from './localStack.js';
import type { LocalStack } from './localStack.js';
import { waitUntil } from './waitUntil.js';

const placed = (orderId: string, customerId = 'customer-1') => ({
  subject: 'OrderPlaced',
  body: { orderId, customerId, currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 19.5 }], placedAt: new Date().toISOString() },
});

/**
 * The retry layers, shortened so that the early payment outlasts its retry budget in about a
 * minute instead of a day: in Azure it would be retried for 24 h and applied when its order came.
 */
export const runbookDemoRetrySettings: Readonly<Record<string, string>> = {
  TRANSIENT_RETRY_IN_INVOCATION_MS: '1000',
  DELAYED_RETRY_FIRST_DELAY_SECONDS: '2',
  DELAYED_RETRY_MAX_DELAY_SECONDS: '4',
  TRANSIENT_RETRY_BUDGET_SECONDS: '10',
};

/**
 * Leaves the dead-letter queue as an operator finds it on a bad day: a conflicting payload, and a
 * payment that came before its order and was dead-lettered (its order has arrived since), so that
 * the README's runbook can be followed against the local stack.
 */
export async function seedRunbookScenario(stack: LocalStack, log: (line: string) => void): Promise<void> {
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const sender = producer.createSender('orders');
  const deadLetters = () => [...(stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.values() ?? [])].map((m) => String(m.message.message_id));
  try {
    await sender.sendMessages({ ...placed('runbook-order-1'), messageId: 'runbook-order-1' });
    await waitUntil('runbook-order-1 to be stored', async () => (await container.item('runbook-order-1', 'runbook-order-1').read()).resource !== undefined, 30_000, 200);
    await sender.sendMessages({ ...placed('runbook-order-1', 'someone-else'), messageId: 'runbook-conflict' });
    await sender.sendMessages({
      subject: 'PaymentReceived',
      messageId: 'runbook-payment',
      body: { orderId: 'runbook-order-2', paymentId: 'runbook-payment', amount: 39, currency: 'EUR', receivedAt: new Date().toISOString() },
    });
    log('\nRunbook demo: a conflicting OrderPlaced (runbook-conflict) and a payment for an order not yet placed (runbook-payment) are on');
    log('their way to the dead-letter queue. The payment is retried until its retry budget (shortened to 10 s for the demo) is spent:');
    log('about a minute.');
    await waitUntil('both messages to be dead-lettered', () => deadLetters().some((id) => id.startsWith('runbook-payment')) && deadLetters().includes('runbook-conflict'), 180_000, 200);
    await sender.sendMessages({ ...placed('runbook-order-2'), messageId: 'runbook-order-2' });
    log(runbookHint(stack));
  } finally {
    await producer.close();
    cosmos.dispose();
  }
}


/** The next step, framed so that it stands out between the delivery lines. */
export function runbookHint(stack: LocalStack): string {
  const rule = '='.repeat(100);
  return [
    '',
    rule,
    ' RUNBOOK DEMO READY: runbook-conflict and runbook-payment are dead-lettered, and runbook-order-2 has arrived since.',
    ' In another terminal, follow docs/operations.md ("Runbook, step by step"):',
    '',
    `   export SERVICEBUS_CONNECTION_STRING='${stack.settings.ServiceBusConnection ?? ''}'`,
    `   export COSMOS_ENDPOINT=${stack.settings.COSMOS_ENDPOINT ?? ''} COSMOS_KEY='${stack.settings.COSMOS_KEY ?? ''}'`,
    '   npm run dlq -- list',
    rule,
    '',
  ].join('\n');
}
