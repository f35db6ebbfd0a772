import { ServiceBusClient } from '@azure/service-bus';
import { createCosmosClient } from '../../src/cosmos/index.js';
import { localContainer, localDatabase } from './localStack.js';
import type { LocalStack } from './localStack.js';
import { seedOperatorScenarios } from './runbookScenarios.js';
import { waitUntil } from './waitUntil.js';

const placed = (orderId: string, customerId = 'customer-1') => ({
  subject: 'OrderPlaced',
  body: { orderId, customerId, currency: 'EUR', lines: [{ sku: 'SKU-1', quantity: 2, unitPrice: 19.5 }], placedAt: new Date().toISOString() },
});

/**
 * The parking horizon shortened so that the early payment is rejected as OrderNeverArrived in
 * seconds instead of 14 days (in Azure it would wait that long for its order), and the sweeper run
 * every 2 s instead of every 5 min.
 */
export const runbookDemoSettings: Readonly<Record<string, string>> = {
  PARKED_ITEM_HORIZON_SECONDS: '5',
  PARKED_SWEEP_SCHEDULE: '*/2 * * * * *',
  PARKED_SWEEP_MIN_AGE_SECONDS: '0',
};

/**
 * Leaves things as an operator finds them on a bad day: a conflicting payload in the dead-letter
 * queue, and a payment whose order did not come in time, rejected as OrderNeverArrived (its order
 * has arrived since), so that the runbook can be followed against the local stack.
 */
export async function seedRunbookScenario(stack: LocalStack, log: (line: string) => void): Promise<void> {
  const producer = new ServiceBusClient(stack.settings.ServiceBusConnection ?? '');
  const cosmos = createCosmosClient({ endpoint: stack.cosmos.endpoint, key: stack.cosmos.key });
  const container = cosmos.database(localDatabase).container(localContainer);
  const sender = producer.createSender('orders');
  const deadLetters = () => [...(stack.serviceBus.entity('orders/$DeadLetterQueue')?.messages.values() ?? [])].map((m) => String(m.message.message_id));
  try {
    await sender.sendMessages({ ...placed('runbook-order-1'), messageId: 'runbook-order-1' });
    await waitUntil(
      'runbook-order-1 to be stored',
      async () => (await container.item('runbook-order-1', 'runbook-order-1').read()).resource !== undefined,
      30_000,
      200,
    );
    await sender.sendMessages({ ...placed('runbook-order-1', 'someone-else'), messageId: 'runbook-conflict' });
    await sender.sendMessages({
      subject: 'PaymentReceived',
      messageId: 'runbook-payment',
      body: { orderId: 'runbook-order-2', paymentId: 'runbook-payment', amount: 39, currency: 'EUR', receivedAt: new Date().toISOString() },
    });
    log('\nRunbook demo: a conflicting OrderPlaced (runbook-conflict) is on its way to the dead-letter queue, and a payment for an');
    log('order not yet placed (runbook-payment) is parked beside it; the sweeper rejects it as OrderNeverArrived after the horizon');
    log('(shortened to 5 s for the demo). About half a minute.');
    const rejected = async () =>
      (
        await container.items
          .query({ query: "SELECT c.id FROM c WHERE c.docType = 'parked' AND c.state = 'rejected'" }, { partitionKey: 'runbook-order-2' })
          .fetchAll()
      ).resources.length > 0;
    await waitUntil(
      'the conflict dead-lettered and the payment rejected',
      async () => deadLetters().includes('runbook-conflict') && (await rejected()),
      180_000,
      200,
    );
    await sender.sendMessages({ ...placed('runbook-order-2'), messageId: 'runbook-order-2' });
    await seedOperatorScenarios(stack, container);
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
    ' RUNBOOK DEMO READY: runbook-conflict is dead-lettered, runbook-payment is a parked item rejected as OrderNeverArrived',
    ' (runbook-order-2 has arrived since), an intake outbox entry failed, a shipment is escalated, and runbook-retry,',
    ' runbook-fulfilment and runbook-audit wait in the dead-letter queues of orders, fulfilment and audit.',
    ' In another terminal, follow docs/operations.md ("Runbook, step by step"):',
    '',
    `   export SERVICEBUS_CONNECTION_STRING='${stack.settings.ServiceBusConnection ?? ''}'`,
    `   export COSMOS_ENDPOINT=${stack.settings.COSMOS_ENDPOINT ?? ''} COSMOS_KEY='${stack.settings.COSMOS_KEY ?? ''}'`,
    '   npm run dlq -- list',
    rule,
    '',
  ].join('\n');
}
