// The namespace and its queues, with the properties of infra/servicebus-queues.json: the same file
// the local emulator loads. Standard tier, because duplicate detection does not exist on Basic and
// can only be switched on when a queue is created.
@description('Name of the Service Bus namespace.')
param name string

@description('Azure region of the namespace.')
param location string

@description('Tags for the namespace.')
param tags object

@description('Queues by name, as in infra/servicebus-queues.json (durations in seconds).')
param queues object

@description('ISO 8601 duration for a number of seconds, e.g. 600 -> PT10M, 1209600 -> P14D.')
func isoDuration(seconds int) string =>
  'P${seconds / 86400 > 0 ? '${seconds / 86400}D' : ''}${seconds % 86400 > 0 ? 'T' : ''}${(seconds % 86400) / 3600 > 0 ? '${(seconds % 86400) / 3600}H' : ''}${(seconds % 3600) / 60 > 0 ? '${(seconds % 3600) / 60}M' : ''}${seconds % 60 > 0 ? '${seconds % 60}S' : ''}'

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: { name: 'Standard', tier: 'Standard' }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
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
      requiresDuplicateDetection: q.value.requiresDuplicateDetection
      duplicateDetectionHistoryTimeWindow: isoDuration(q.value.duplicateDetectionHistoryTimeWindowSeconds)
      deadLetteringOnMessageExpiration: q.value.deadLetteringOnMessageExpiration
    }
  }
]

output name string = namespace.name
output fullyQualifiedNamespace string = '${namespace.name}.servicebus.windows.net'
