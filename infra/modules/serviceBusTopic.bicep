// One topic of infra/servicebus-queues.json and its subscriptions.
import { isoDuration } from 'durations.bicep'

@description('The Service Bus namespace the topic lives in.')
param namespaceName string

@description('The topic name.')
param name string

@description('The topic as in infra/servicebus-queues.json (durations in seconds).')
param definition object


resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: namespaceName
}

resource topic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: name
  properties: {
    defaultMessageTimeToLive: isoDuration(definition.defaultMessageTimeToLiveSeconds)
    maxSizeInMegabytes: definition.maxSizeInMegabytes
    requiresDuplicateDetection: definition.requiresDuplicateDetection
    duplicateDetectionHistoryTimeWindow: isoDuration(definition.duplicateDetectionHistoryTimeWindowSeconds)
  }
}

module subscription 'serviceBusSubscription.bicep' = [
  for s in items(definition.subscriptions): {
    name: 'subscription-${name}-${s.key}'
    params: { namespaceName: namespaceName, topicName: topic.name, name: s.key, definition: s.value }
  }
]
