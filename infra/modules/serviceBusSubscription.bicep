// One subscription of a topic, with its rules.
import { isoDuration } from 'durations.bicep'

@description('The Service Bus namespace.')
param namespaceName string

@description('The topic the subscription belongs to.')
param topicName string

@description('The subscription name.')
param name string

@description('The subscription as in infra/servicebus-queues.json (durations in seconds).')
param definition object


var rules = definition.?rules ?? {}

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: namespaceName

  resource topic 'topics' existing = {
    name: topicName
  }
}

resource subscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: namespace::topic
  name: name
  properties: {
    lockDuration: isoDuration(definition.lockDurationSeconds)
    maxDeliveryCount: definition.maxDeliveryCount
    defaultMessageTimeToLive: isoDuration(definition.defaultMessageTimeToLiveSeconds)
    deadLetteringOnMessageExpiration: definition.deadLetteringOnMessageExpiration
    // A session-enabled subscription hands one session (the outbox sets it to the order id) to one
    // receiver at a time, in order: a subscriber that needs an order's events in order reads it so.
    requiresSession: definition.?requiresSession ?? false
  }
}

// Azure gives every subscription a $Default rule that matches everything. One with rules of its own
// must not keep it: it is replaced by one that matches nothing (the local emulator has no $Default
// on such a subscription, which is the same).
resource defaultRule 'Microsoft.ServiceBus/namespaces/topics/subscriptions/rules@2024-01-01' = if (!empty(rules)) {
  parent: subscription
  name: '$Default'
  properties: { filterType: 'SqlFilter', sqlFilter: { sqlExpression: '1=0' } }
}

resource rule 'Microsoft.ServiceBus/namespaces/topics/subscriptions/rules@2024-01-01' = [
  for r in items(rules): {
    parent: subscription
    name: r.key
    dependsOn: [defaultRule]
    properties: contains(r.value, 'sqlFilter')
      ? { filterType: 'SqlFilter', sqlFilter: { sqlExpression: r.value.sqlFilter } }
      : {
          filterType: 'CorrelationFilter'
          correlationFilter: {
            correlationId: r.value.correlationFilter.?correlationId
            messageId: r.value.correlationFilter.?messageId
            to: r.value.correlationFilter.?to
            replyTo: r.value.correlationFilter.?replyTo
            label: r.value.correlationFilter.?subject
            sessionId: r.value.correlationFilter.?sessionId
            replyToSessionId: r.value.correlationFilter.?replyToSessionId
            contentType: r.value.correlationFilter.?contentType
            properties: r.value.correlationFilter.?applicationProperties
          }
        }
  }
]
