// What an operator is woken for: each alert names a fault the pattern must never hide (docs/operations.md#alerts).
@description('Application Insights component the app sends its telemetry to.')
param applicationInsightsName string

@description('Service Bus namespace: its dead-letter queues are watched by the DeadletteredMessages metric.')
param serviceBusNamespaceName string

@description('Where the alerts live (log alerts need a region; the action group is global).')
param location string

param tags object

@description('An e-mail address the action group notifies; empty: alerts fire in the portal only.')
param alertEmail string = ''

@description('Duplicates per 100 messages above which the duplicate-ratio alert fires (a producer retrying too eagerly, a lock too short, a consumer failing after its write).')
param duplicateRatioPercent int = 20

@description('Seconds of outbox lag (the age of the oldest pending entry) above which the alert fires: OUTBOX_LAG_ALERT_SECONDS.')
param outboxLagAlertSeconds int

@description('Seconds an early arrival may wait for its order before the alert fires (well below the parking horizon).')
param parkedAgeAlertSeconds int = 3600

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource serviceBus 'Microsoft.ServiceBus/namespaces@2022-10-01-preview' existing = {
  name: serviceBusNamespaceName
}

resource operators 'Microsoft.Insights/actionGroups@2023-01-01' = {
  name: 'ag-orders-operators'
  location: 'Global'
  tags: tags
  properties: {
    groupShortName: 'orders-ops'
    enabled: true
    emailReceivers: empty(alertEmail) ? [] : [{ name: 'operator', emailAddress: alertEmail, useCommonAlertSchema: true }]
  }
}

// The outcome counter as Application Insights stores it: customMetrics, one row per export interval and dimension set.
var outcomes = 'customMetrics | where name == "orders.messages" | extend outcome = tostring(customDimensions.outcome)'

var logAlerts = [
  {
    name: 'conflict-or-invalid'
    severity: 1
    window: 'PT5M'
    description: 'A message was a conflict (same key, another payload) or invalid: it is on its way to the dead-letter queue with its reason recorded. Runbook: docs/operations.md.'
    query: '${outcomes} | where outcome in ("conflict", "invalid") | summarize total = sum(value)'
    column: 'total'
    threshold: 0
  }
  {
    name: 'duplicate-ratio'
    severity: 2
    window: 'PT15M'
    description: 'Duplicates are a rising share of deliveries: a producer retrying with the same id, a lock shorter than processing, or a consumer failing after its write.'
    query: '${outcomes} | summarize duplicates = sumif(value, outcome == "duplicate"), all = sum(value) | where all >= 20 | extend percent = 100.0 * duplicates / all'
    column: 'percent'
    threshold: duplicateRatioPercent
  }
  {
    name: 'outbox-lag'
    severity: 2
    window: 'PT5M'
    description: 'An outbox entry has waited longer than OUTBOX_LAG_ALERT_SECONDS to be published: events are late (npm run dlq -- outbox list).'
    query: 'customMetrics | where name == "outbox.lag" | summarize lag = max(valueMax)'
    column: 'lag'
    threshold: outboxLagAlertSeconds
  }
  {
    name: 'outbox-failed'
    severity: 2
    window: 'PT5M'
    description: 'The publisher set an outbox entry aside as failed (a missing topic, a message too large): that event will not be sent until an operator requeues it. Runbook: docs/operations.md#a-failed-outbox-entry (npm run ops -- outbox list).'
    query: 'customMetrics | where name == "outbox.events" | extend outcome = tostring(customDimensions.outcome) | where outcome == "failed" | summarize total = sum(value)'
    column: 'total'
    threshold: 0
  }
  {
    name: 'parked-item-rejected'
    severity: 2
    window: 'PT5M'
    description: 'An early arrival (a payment or status change) was rejected: its order never came, or it conflicts with it; its effect is not applied until an operator acts. Runbook: docs/operations.md#a-rejected-parked-item (npm run ops -- parked list).'
    query: 'customMetrics | where name == "orders.parked_items" | extend event = tostring(customDimensions.event) | where event == "rejected" | summarize total = sum(value)'
    column: 'total'
    threshold: 0
  }
  {
    name: 'parked-items-old'
    severity: 3
    window: 'PT15M'
    description: 'A payment or status change has waited long for its order: the OrderPlaced may be lost upstream (npm run dlq -- parked list).'
    query: 'customMetrics | where name == "orders.parked_items.oldest_age" | summarize age = max(valueMax)'
    column: 'age'
    threshold: parkedAgeAlertSeconds
  }
  {
    name: 'shipment-escalated'
    severity: 2
    window: 'PT5M'
    description: 'A shipment booking could not be settled by the reconciler and waits for an operator (npm run dlq -- shipments list --state escalated).'
    query: 'customMetrics | where name == "shipments.escalations" | summarize total = sum(value)'
    column: 'total'
    threshold: 0
  }
]

resource alerts 'Microsoft.Insights/scheduledQueryRules@2023-03-15-preview' = [for alert in logAlerts: {
  name: 'alert-orders-${alert.name}'
  location: location
  tags: tags
  properties: {
    displayName: 'orders: ${alert.name}'
    description: alert.description
    severity: alert.severity
    enabled: true
    scopes: [applicationInsights.id]
    evaluationFrequency: 'PT5M'
    windowSize: alert.window
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: alert.query
          timeAggregation: 'Maximum'
          metricMeasureColumn: alert.column
          operator: 'GreaterThan'
          threshold: alert.threshold
          failingPeriods: { numberOfEvaluationPeriods: 1, minFailingPeriodsToAlert: 1 }
        }
      ]
    }
    actions: { actionGroups: [operators.id] }
  }
}]

// Any dead-lettered message on any queue or subscription: the trigger only dead-letters after maxDeliveryCount, so each is a person's job.
resource deadLettered 'Microsoft.Insights/metricAlerts@2018-03-01' = {
  name: 'alert-orders-dead-lettered'
  location: 'global'
  tags: tags
  properties: {
    description: 'Messages are in a dead-letter queue: npm run dlq -- list (docs/operations.md).'
    severity: 1
    enabled: true
    scopes: [serviceBus.id]
    evaluationFrequency: 'PT1M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'dead-lettered'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [{ name: 'EntityName', operator: 'Include', values: ['*'] }]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: [{ actionGroupId: operators.id }]
  }
}

var workbook = {
  version: 'Notebook/1.0'
  items: [
    { type: 1, name: 'title', content: { json: '## Idempotent order consumer\nOutcome rates, the duplicate ratio, dead-letter depth and outbox lag. Runbook: docs/operations.md.' } }
    {
      type: 3
      name: 'outcomes'
      content: {
        version: 'KqlItem/1.0'
        title: 'Messages by outcome'
        query: '${outcomes} | summarize messages = sum(value) by outcome, bin(timestamp, 5m) | render timechart'
        queryType: 0
        resourceType: 'microsoft.insights/components'
        visualization: 'timechart'
      }
    }
    {
      type: 3
      name: 'duplicate-ratio'
      content: {
        version: 'KqlItem/1.0'
        title: 'Duplicate ratio (duplicates per 100 messages)'
        query: '${outcomes} | summarize duplicates = sumif(value, outcome == "duplicate"), all = sum(value) by bin(timestamp, 5m) | extend percent = 100.0 * duplicates / all | project timestamp, percent | render timechart'
        queryType: 0
        resourceType: 'microsoft.insights/components'
        visualization: 'timechart'
      }
    }
    {
      type: 10
      name: 'dead-letter-depth'
      content: {
        version: 'MetricsItem/2.0'
        title: 'Dead-letter depth by entity'
        resourceType: 'microsoft.servicebus/namespaces'
        resourceIds: [serviceBus.id]
        timeContext: { durationMs: 86400000 }
        chartType: 2
        metrics: [{ namespace: 'microsoft.servicebus/namespaces', metric: 'microsoft.servicebus/namespaces--DeadletteredMessages', aggregation: 3, splitBy: 'EntityName' }]
      }
    }
    {
      type: 3
      name: 'outbox-lag'
      content: {
        version: 'KqlItem/1.0'
        title: 'Outbox lag (s, oldest pending entry at each sweep) and publish delay'
        query: 'customMetrics | where name in ("outbox.lag", "outbox.publish_delay") | summarize seconds = max(valueMax) by name, bin(timestamp, 5m) | render timechart'
        queryType: 0
        resourceType: 'microsoft.insights/components'
        visualization: 'timechart'
      }
    }
  ]
}

resource dashboard 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(applicationInsights.id, 'orders-workbook')
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Idempotent order consumer'
    category: 'workbook'
    sourceId: applicationInsights.id
    serializedData: string(workbook)
  }
}

output actionGroupId string = operators.id
