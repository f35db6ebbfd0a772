// Every role assignment, least privilege: the app owns its queue's data (below), reads and writes the
// orders container and the change feed trigger's leases, sends to the order-events topic, owns its
// host storage, publishes telemetry. The deploying
// user gets what `npm run dlq` and a local run against Azure need: receive and send on the queue,
// read and write the container.
@description('Name of the app\'s user-assigned managed identity.')
param appIdentityName string

@description('Object id of the deploying user or principal; empty for none.')
param userPrincipalId string

@description('Type of that principal.')
@allowed(['User', 'ServicePrincipal', 'Group'])
param userPrincipalType string

@description('Service Bus namespace name.')
param serviceBusName string

@description('The orders queue name.')
param ordersQueueName string

@description('Cosmos DB account name.')
param cosmosAccountName string

@description('Cosmos DB database name.')
param cosmosDatabaseName string

@description('Cosmos DB orders container name.')
param cosmosContainerName string

@description('Leases container of the outbox publisher\'s Cosmos DB trigger.')
param cosmosLeasesContainerName string

@description('The topic the outbox publisher sends events to.')
param orderEventsTopicName string

@description('The subscription requestShipment reads.')
param fulfilmentSubscriptionName string

@description('Key Vault holding the carrier API key.')
param keyVaultName string

@description('Host storage account name.')
param storageAccountName string

@description('Application Insights component name.')
param applicationInsightsName string

var roles = {
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  // Cosmos DB data-plane role (sqlRoleDefinitions), not an Azure RBAC role.
  cosmosBuiltInDataContributor: '00000000-0000-0000-0000-000000000002'
}

resource appIdentity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' existing = {
  name: appIdentityName
}

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusName
}

resource ordersQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' existing = {
  parent: namespace
  name: ordersQueueName
}

resource orderEventsTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' existing = {
  parent: namespace
  name: orderEventsTopicName
}

resource fulfilment 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' existing = {
  parent: orderEventsTopic
  name: fulfilmentSubscriptionName
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

// Assignment names hash the identity's resource id, known before deployment; its principal id is not.
var appPrincipalId = appIdentity.properties.principalId
var containerScope = '${cosmos.id}/dbs/${cosmosDatabaseName}/colls/${cosmosContainerName}'
var leasesScope = '${cosmos.id}/dbs/${cosmosDatabaseName}/colls/${cosmosLeasesContainerName}'
var cosmosDataContributor = '${cosmos.id}/sqlRoleDefinitions/${roles.cosmosBuiltInDataContributor}'

// Data Owner, not only Data Receiver: with identity connections the Functions scale controller reads
// the queue's length through the management API, which needs the Manage claim; with Receiver alone
// the Service Bus extension logs the missing claim and falls back to peeking, and Flex Consumption
// scales on a guess. Scoped to the one queue, so it manages nothing else in the namespace. Owner
// includes Send, which the app needs on this queue too: delayed retries are re-sent here, and the
// outbox publisher sends the HTTP intake's OrderPlaced events here.
resource appOwnsOrdersQueue 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: ordersQueue
  name: guid(ordersQueue.id, appIdentity.id, roles.serviceBusDataOwner)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataOwner)
  }
}

resource appOwnsHostStorage 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: storage
  name: guid(storage.id, appIdentity.id, roles.storageBlobDataOwner)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataOwner)
  }
}

resource appPublishesTelemetry 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: applicationInsights
  name: guid(applicationInsights.id, appIdentity.id, roles.monitoringMetricsPublisher)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
  }
}

resource appWritesOrders 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmos
  name: guid(containerScope, appIdentity.id, roles.cosmosBuiltInDataContributor)
  properties: {
    principalId: appPrincipalId
    roleDefinitionId: cosmosDataContributor
    scope: containerScope
  }
}

// The change feed trigger reads the orders container (granted above, where the publisher also marks
// entries published) and acquires, renews and checkpoints its leases here.
resource appKeepsLeases 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmos
  name: guid(leasesScope, appIdentity.id, roles.cosmosBuiltInDataContributor)
  properties: {
    principalId: appPrincipalId
    roleDefinitionId: cosmosDataContributor
    scope: leasesScope
  }
}

// The outbox publisher sends; it never receives or manages the topic.
resource appPublishesOrderEvents 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: orderEventsTopic
  name: guid(orderEventsTopic.id, appIdentity.id, roles.serviceBusDataSender)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
  }
}

// requestShipment's trigger; Data Owner for the scale controller's Manage claim, as on the orders queue.
resource appOwnsFulfilment 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: fulfilment
  name: guid(fulfilment.id, appIdentity.id, roles.serviceBusDataOwner)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataOwner)
  }
}

// The platform resolves the CARRIER_API_KEY Key Vault reference with the app's identity: read secrets, nothing else.
resource appReadsCarrierKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: vault
  name: guid(vault.id, appIdentity.id, roles.keyVaultSecretsUser)
  properties: {
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
  }
}

// The operator sets and rotates the carrier key (az keyvault secret set).
resource userManagesCarrierKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  scope: vault
  name: guid(vault.id, userPrincipalId, roles.keyVaultSecretsOfficer)
  properties: {
    principalId: userPrincipalId
    principalType: userPrincipalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
  }
}

// The dead-letter tool on the fulfilment subscription: receive its dead letters, resubmit through the topic.
resource userReceivesFulfilment 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  scope: fulfilment
  name: guid(fulfilment.id, userPrincipalId, roles.serviceBusDataReceiver)
  properties: {
    principalId: userPrincipalId
    principalType: userPrincipalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataReceiver)
  }
}

resource userResubmitsOrderEvents 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  scope: orderEventsTopic
  name: guid(orderEventsTopic.id, userPrincipalId, roles.serviceBusDataSender)
  properties: {
    principalId: userPrincipalId
    principalType: userPrincipalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
  }
}

resource userReceivesOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  scope: ordersQueue
  name: guid(ordersQueue.id, userPrincipalId, roles.serviceBusDataReceiver)
  properties: {
    principalId: userPrincipalId
    principalType: userPrincipalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataReceiver)
  }
}

resource userResubmitsOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(userPrincipalId)) {
  scope: ordersQueue
  name: guid(ordersQueue.id, userPrincipalId, roles.serviceBusDataSender)
  properties: {
    principalId: userPrincipalId
    principalType: userPrincipalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.serviceBusDataSender)
  }
}

resource userReadsOrders 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = if (!empty(userPrincipalId)) {
  parent: cosmos
  name: guid(containerScope, userPrincipalId, roles.cosmosBuiltInDataContributor)
  properties: {
    principalId: userPrincipalId
    roleDefinitionId: cosmosDataContributor
    scope: containerScope
  }
}
