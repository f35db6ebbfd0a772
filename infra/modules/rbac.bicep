// Every role assignment, least privilege: data-plane roles only, each on the one entity, container
// or secret it is needed for; nothing on a whole namespace, account or vault. Three kinds of
// principal: the app's identity; the operators (a group, in every environment), with exactly what
// the runbook (docs/operations.md) needs; and, when the deployment asks for it (development), the
// deploying principal with the same data access, so a local run and the tool work without a group.
@description('Name of the app\'s user-assigned managed identity.')
param appIdentityName string

@description('Object id of the operators (a group, ideally); empty for none.')
param operatorPrincipalId string = ''

@description('Type of the operators\' principal.')
@allowed(['User', 'ServicePrincipal', 'Group'])
param operatorPrincipalType string = 'Group'

@description('Object id of the deploying principal that gets data access; empty for none.')
param deployerPrincipalId string = ''

@description('Type of the deploying principal.')
@allowed(['User', 'ServicePrincipal', 'Group'])
param deployerPrincipalType string = 'User'

@description('Service Bus namespace name.')
param serviceBusName string

@description('The orders queue name.')
param ordersQueueName string

@description('The topic the outbox publisher sends events to.')
param orderEventsTopicName string

@description('The subscription requestShipment reads.')
param fulfilmentSubscriptionName string

@description('The session-enabled subscription that receives every event (read by no function here; its dead letters are the operators\').')
param auditSubscriptionName string

@description('Cosmos DB account name.')
param cosmosAccountName string

@description('Cosmos DB database name.')
param cosmosDatabaseName string

@description('Cosmos DB orders container name.')
param cosmosContainerName string

@description('Leases container of the outbox publisher\'s Cosmos DB trigger.')
param cosmosLeasesContainerName string

@description('Key Vault holding the carrier API key.')
param keyVaultName string

@description('Name of the secret with the carrier API key.')
param carrierApiKeySecretName string

@description('Name of the secret with the retry state signing key (always present).')
param retryStateSigningKeySecretName string

@description('Name of the secret with the key before the last rotation (always present).')
param retryStateSigningKeyPreviousSecretName string

@description('Whether a carrier is configured: then the secret exists and the app and the operators get a role on it.')
param carrierConfigured bool

@description('Host storage account name.')
param storageAccountName string

@description('Blob containers the Functions host and the Flex Consumption deployment use.')
param hostContainerNames string[]

@description('Application Insights component name.')
param applicationInsightsName string

var roles = {
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  // Cosmos DB data-plane role (sqlRoleDefinitions), not an Azure RBAC role.
  cosmosBuiltInDataContributor: '00000000-0000-0000-0000-000000000002'
}

// The people with data access: the operators, and the deploying principal when it is granted some
// (once only when both are the same principal: one assignment per principal, role and scope).
var people = concat(
  empty(operatorPrincipalId) ? [] : [{ id: operatorPrincipalId, type: operatorPrincipalType }],
  empty(deployerPrincipalId) || deployerPrincipalId == operatorPrincipalId ? [] : [{ id: deployerPrincipalId, type: deployerPrincipalType }]
)

// The built-in roles, by their fixed ids.
resource serviceBusDataReceiver 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.serviceBusDataReceiver
}

resource serviceBusDataSender 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.serviceBusDataSender
}

resource storageBlobDataOwner 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.storageBlobDataOwner
}

resource monitoringMetricsPublisher 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.monitoringMetricsPublisher
}

resource keyVaultSecretsUser 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.keyVaultSecretsUser
}

resource keyVaultSecretsOfficer 'Microsoft.Authorization/roleDefinitions@2022-04-01' existing = {
  scope: subscription()
  name: roles.keyVaultSecretsOfficer
}

resource appIdentity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' existing = {
  name: appIdentityName
}

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusName

  resource ordersQueue 'queues' existing = {
    name: ordersQueueName
  }

  resource orderEventsTopic 'topics' existing = {
    name: orderEventsTopicName

    resource fulfilment 'subscriptions' existing = {
      name: fulfilmentSubscriptionName
    }

    resource audit 'subscriptions' existing = {
      name: auditSubscriptionName
    }
  }
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName

  resource carrierKey 'secrets' existing = {
    name: carrierApiKeySecretName
  }

  resource retryStateKey 'secrets' existing = {
    name: retryStateSigningKeySecretName
  }

  resource retryStatePreviousKey 'secrets' existing = {
    name: retryStateSigningKeyPreviousSecretName
  }
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName

  resource blobs 'blobServices' existing = {
    name: 'default'
  }
}

resource hostContainers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' existing = [
  for containerName in hostContainerNames: {
    parent: storage::blobs
    name: containerName
  }
]

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

// The app --------------------------------------------------------------------------------------
// Data Receiver and Data Sender, not Data Owner. Data Owner's data actions (Microsoft.ServiceBus/*)
// carry the Manage claim, which the Functions scale controller uses to read an entity's message
// count: without it the Service Bus extension's ServiceBusMetricsProvider logs the missing claim,
// the target-based scaler fails and the host falls back to incremental scaling, which votes on the
// age of the first message it peeks (Azure/azure-sdk-for-net,
// sdk/servicebus/Microsoft.Azure.WebJobs.Extensions.ServiceBus/src/Listeners/ServiceBusMetricsProvider.cs;
// Azure/azure-webjobs-sdk Scale/ScaleManager.cs, _targetScalersInError). Service Bus has no data
// action that reads counts without also managing (deleting, recreating) the entity, and Data Owner
// adds control-plane writes besides (Actions Microsoft.ServiceBus/*): a consumer that can delete its
// own queue is a worse risk than scaling on the oldest message's age. docs/deployment.md says how to
// opt into the Manage claim for exact scaling.
resource appReceivesOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: namespace::ordersQueue
  name: guid(namespace::ordersQueue.id, appIdentity.id, roles.serviceBusDataReceiver)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: serviceBusDataReceiver.id }
}

// Delayed retries are re-sent to the queue, and the outbox publisher sends the intake's OrderPlaced there.
resource appSendsOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: namespace::ordersQueue
  name: guid(namespace::ordersQueue.id, appIdentity.id, roles.serviceBusDataSender)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: serviceBusDataSender.id }
}

// The outbox publisher (and requestShipment's delayed retries, addressed to fulfilment) send; nothing receives on the topic itself.
resource appPublishesOrderEvents 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: namespace::orderEventsTopic
  name: guid(namespace::orderEventsTopic.id, appIdentity.id, roles.serviceBusDataSender)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: serviceBusDataSender.id }
}

// requestShipment's trigger: a topic trigger needs its role on the subscription itself, not the topic.
resource appReceivesFulfilment 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: namespace::orderEventsTopic::fulfilment
  name: guid(namespace::orderEventsTopic::fulfilment.id, appIdentity.id, roles.serviceBusDataReceiver)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: serviceBusDataReceiver.id }
}

// Host storage: Storage Blob Data Owner is the role the Functions documentation names for
// AzureWebJobsStorage (read, write, create containers); scoped to the containers the host and the
// deployment use, which storage.bicep creates, instead of the account. The host uses no queue or
// table here (no blob trigger, no Durable Functions), so it has no role on them.
resource appOwnsHostContainers 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (containerName, i) in hostContainerNames: {
    scope: hostContainers[i]
    name: guid(hostContainers[i].id, appIdentity.id, roles.storageBlobDataOwner)
    properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: storageBlobDataOwner.id }
  }
]

resource appPublishesTelemetry 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: applicationInsights
  name: guid(applicationInsights.id, appIdentity.id, roles.monitoringMetricsPublisher)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: monitoringMetricsPublisher.id }
}

resource appWritesOrders 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmos
  name: guid(containerScope, appIdentity.id, roles.cosmosBuiltInDataContributor)
  properties: { principalId: appPrincipalId, roleDefinitionId: cosmosDataContributor, scope: containerScope }
}

// The change feed trigger reads the orders container (granted above, where the publisher also marks
// entries published) and acquires, renews and checkpoints its leases here.
resource appKeepsLeases 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: cosmos
  name: guid(leasesScope, appIdentity.id, roles.cosmosBuiltInDataContributor)
  properties: { principalId: appPrincipalId, roleDefinitionId: cosmosDataContributor, scope: leasesScope }
}

// The platform resolves the CARRIER_API_KEY reference with the app's identity: read this one secret.
resource appReadsCarrierKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (carrierConfigured) {
  scope: vault::carrierKey
  name: guid(vault::carrierKey.id, appIdentity.id, roles.keyVaultSecretsUser)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: keyVaultSecretsUser.id }
}

// The platform resolves the RETRY_STATE_SIGNING_KEY reference with the app's identity: read this one secret.
resource appReadsRetryStateKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: vault::retryStateKey
  name: guid(vault::retryStateKey.id, appIdentity.id, roles.keyVaultSecretsUser)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: keyVaultSecretsUser.id }
}

// And RETRY_STATE_SIGNING_KEY_PREVIOUS's: the key a rotation keeps accepting.
resource appReadsRetryStatePreviousKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  scope: vault::retryStatePreviousKey
  name: guid(vault::retryStatePreviousKey.id, appIdentity.id, roles.keyVaultSecretsUser)
  properties: { principalId: appPrincipalId, principalType: 'ServicePrincipal', roleDefinitionId: keyVaultSecretsUser.id }
}

// The operators (and a development deployer) -------------------------------------------------
// The dead-letter tool on the queue: list, show and purge receive from its dead-letter queue;
// resubmit and `parked resubmit` send copies to the queue.
resource peopleReceiveOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in people: {
    scope: namespace::ordersQueue
    name: guid(namespace::ordersQueue.id, p.id, roles.serviceBusDataReceiver)
    properties: { principalId: p.id, principalType: p.type, roleDefinitionId: serviceBusDataReceiver.id }
  }
]

resource peopleSendOrders 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in people: {
    scope: namespace::ordersQueue
    name: guid(namespace::ordersQueue.id, p.id, roles.serviceBusDataSender)
    properties: { principalId: p.id, principalType: p.type, roleDefinitionId: serviceBusDataSender.id }
  }
]

// Each subscription's dead letters (`--topic order-events --subscription fulfilment|audit`) ...
resource peopleReceiveFulfilment 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in people: {
    scope: namespace::orderEventsTopic::fulfilment
    name: guid(namespace::orderEventsTopic::fulfilment.id, p.id, roles.serviceBusDataReceiver)
    properties: { principalId: p.id, principalType: p.type, roleDefinitionId: serviceBusDataReceiver.id }
  }
]

resource peopleReceiveAudit 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in people: {
    scope: namespace::orderEventsTopic::audit
    name: guid(namespace::orderEventsTopic::audit.id, p.id, roles.serviceBusDataReceiver)
    properties: { principalId: p.id, principalType: p.type, roleDefinitionId: serviceBusDataReceiver.id }
  }
]

// ... resubmitted through the topic, addressed to the subscription.
resource peopleResubmitOrderEvents 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for p in people: {
    scope: namespace::orderEventsTopic
    name: guid(namespace::orderEventsTopic.id, p.id, roles.serviceBusDataSender)
    properties: { principalId: p.id, principalType: p.type, roleDefinitionId: serviceBusDataSender.id }
  }
]

// The tool reads the store's view of each message (list, show) and writes the records its commands
// change: parked items (resubmit, discard), outbox entries (requeue), shipments (resolve). Data
// Contributor is Cosmos DB's narrowest built-in role that writes items; it cannot change the
// account, databases or containers (disableKeyBasedMetadataWriteAccess).
resource peopleWriteOrders 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = [
  for p in people: {
    parent: cosmos
    name: guid(containerScope, p.id, roles.cosmosBuiltInDataContributor)
    properties: { principalId: p.id, roleDefinitionId: cosmosDataContributor, scope: containerScope }
  }
]

// Rotating the carrier key (az keyvault secret set --name carrier-api-key): this one secret.
resource operatorsRotateCarrierKey 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (carrierConfigured && !empty(operatorPrincipalId)) {
  scope: vault::carrierKey
  name: guid(vault::carrierKey.id, operatorPrincipalId, roles.keyVaultSecretsOfficer)
  properties: { principalId: operatorPrincipalId, principalType: operatorPrincipalType, roleDefinitionId: keyVaultSecretsOfficer.id }
}
