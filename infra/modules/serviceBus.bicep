// The namespace and its queues, with the properties of infra/servicebus-queues.json: the same file
// the local emulator loads. Standard or Premium, because duplicate detection does not exist on Basic
// and can only be switched on when a queue is created. Only Premium has private endpoints (and
// network rules beyond IP filters): docs/deployment.md, "Network".
import { isoDuration } from 'durations.bicep'

@description('Name of the Service Bus namespace.')
param name string

@description('Azure region of the namespace.')
param location string

@description('Tags for the namespace.')
param tags object

@description('Queues by name, as in infra/servicebus-queues.json (durations in seconds).')
param queues object

@description('Topics by name, each with its subscriptions and their rules, as in infra/servicebus-queues.json.')
param topics object = {}

@description('Tier: Standard, or Premium (one messaging unit), the tier with private endpoints.')
@allowed(['Standard', 'Premium'])
param sku string = 'Standard'

@description('Whether the namespace is reached through a private endpoint only (public network access off); Premium only.')
param privateOnly bool = false

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: sku == 'Premium' ? { name: 'Premium', tier: 'Premium', capacity: 1 } : { name: 'Standard', tier: 'Standard' }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    // A Standard namespace has no private endpoint to fall back on: turning public access off there
    // would cut the app off, so only a Premium one goes private.
    publicNetworkAccess: privateOnly && sku == 'Premium' ? 'Disabled' : 'Enabled'
  }
}

resource queue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = [
  for q in items(queues): {
    parent: namespace
    name: q.key
    properties: {
      lockDuration: isoDuration(q.value.lockDurationSeconds)
      maxDeliveryCount: q.value.maxDeliveryCount
      defaultMessageTimeToLive: isoDuration(q.value.defaultMessageTimeToLiveSeconds)
      // A cap on what senders can pile up (Standard: at most 5120): past it a send fails with QuotaExceeded, the app's storage is untouched.
      maxSizeInMegabytes: q.value.maxSizeInMegabytes
      requiresDuplicateDetection: q.value.requiresDuplicateDetection
      duplicateDetectionHistoryTimeWindow: isoDuration(q.value.duplicateDetectionHistoryTimeWindowSeconds)
      deadLetteringOnMessageExpiration: q.value.deadLetteringOnMessageExpiration
    }
  }
]

// A module per topic, and one per subscription in it: Bicep loops do not nest.
module topic 'serviceBusTopic.bicep' = [
  for t in items(topics): {
    name: 'topic-${t.key}'
    params: { namespaceName: namespace.name, name: t.key, definition: t.value }
  }
]

output name string = namespace.name
output fullyQualifiedNamespace string = '${namespace.name}.servicebus.windows.net'
