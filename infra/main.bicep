// Entry point for `azd up`: the resource group and one module per concern. Nothing here reaches a
// registry, so the template compiles offline.
targetScope = 'subscription'

@minLength(1)
@maxLength(40)
@description('Name of the azd environment; it names the resource group and tags every resource.')
param environmentName string

// Flex Consumption runs in these regions only (the official azd quickstarts' list, less the canary
// eastus2euap); azd offers exactly these when it asks for a location.
@minLength(1)
@description('Azure region for every resource: one where Flex Consumption is available.')
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@metadata({ azd: { type: 'location' } })
param location string

@description('Object id of the deploying user or pipeline (azd sets AZURE_PRINCIPAL_ID). It gets data access only with grantDeployerDataAccess.')
param principalId string = ''

@description('Type of that principal: azd sets AZURE_PRINCIPAL_TYPE (ServicePrincipal when a pipeline signs in).')
@allowed(['User', 'ServicePrincipal', 'Group'])
param principalType string = 'User'

@description('Whether the deploying principal gets the operators\' data access (the dead-letter tool, a local run against Azure): for development. Off in production, so no pipeline holds standing data access.')
param grantDeployerDataAccess bool = true

@description('Object id of the operators (an Entra ID group), granted what the runbook in docs/operations.md needs, in every environment. Empty: no grant.')
param operatorPrincipalId string = ''

@description('Type of the operators\' principal: a Group, or User / ServicePrincipal for a single person or tool.')
@allowed(['User', 'ServicePrincipal', 'Group'])
param operatorPrincipalType string = 'Group'

@description('Whether the data planes are private: a virtual network the app integrates with, private endpoints and DNS zones for Cosmos DB, Blob storage, Key Vault and (Premium only) Service Bus, and public network access off on each.')
param vnetEnabled bool = false

@description('Service Bus tier: Standard (no private endpoints), or Premium (one messaging unit), which vnetEnabled needs to make Service Bus private too.')
@allowed(['Standard', 'Premium'])
param serviceBusSku string = 'Standard'

@description('Key Vault purge protection: a deleted vault cannot be purged for 90 days, nor its name reused. Irreversible once on.')
param keyVaultPurgeProtection bool = true

@description('Days the Log Analytics workspace keeps logs and audit events.')
@minValue(30)
@maxValue(730)
param logRetentionDays int = 90

@description('Base URL of the carrier API requestShipment books with. Empty: requestShipment and reconcileShipments are deployed disabled (events wait on the fulfilment subscription).')
param carrierApiUrl string = ''

@description('Whether App Service authentication (Entra ID) guards the function app, so POST /api/orders refuses unauthenticated requests (401) and the app scopes Idempotency-Keys and orders by the caller\'s principal (INTAKE_CALLER_IDENTITY=entra). Needs intakeAuthClientId.')
param intakeAuthEnabled bool = false

@description('Application (client) id of the Entra ID app registration that callers request tokens for (the audience). Used only with intakeAuthEnabled.')
param intakeAuthClientId string = ''

@description('An e-mail address the alerts notify (the operators action group). Empty: alerts fire in the portal only.')
param alertEmail string = ''

@description('Seconds of outbox lag that raise the outbox-lag alert; also the app\'s OUTBOX_LAG_ALERT_SECONDS.')
param outboxLagAlertSeconds int = 300

@description('Duplicates per 100 messages that raise the duplicate-ratio alert.')
param duplicateRatioPercent int = 20

@secure()
@description('The carrier API key, written to Key Vault by Resource Manager. Empty: nothing is written and an existing secret is kept. The secret must exist once carrierApiUrl is set: the app\'s and the operators\' roles are on it.')
param carrierApiKey string = ''

// No default: a new random key at each provision would make every delayed-retry copy in flight a
// first attempt again (its budget restarted). The preprovision hook draws one once per environment.
@secure()
@minLength(32)
@description('Signs the retry state of delayed-retry copies and keys their MessageIds (RETRY_STATE_SIGNING_KEY), written to Key Vault. Stable per environment: the azd preprovision hook (infra/hooks/ensureRetryStateSigningKey.cjs) generates it once into the azd environment; rotate it as docs/deployment.md says.')
param retryStateSigningKey string

@secure()
@description('The signing key before the last rotation (RETRY_STATE_SIGNING_KEY_PREVIOUS): verification accepts it too, so copies in flight keep their budget. Empty: no rotation under way, and its secret holds the current key.')
param retryStateSigningKeyPrevious string = ''

var queueFile = loadJsonContent('servicebus-queues.json')
var ordersQueueName = 'orders'
var orders = queueFile.queues[ordersQueueName]
var token = toLower(uniqueString(subscription().id, environmentName, location))
var tags = { 'azd-env-name': environmentName }
// Names are fixed before anything deploys, so every module (and What-If) knows them up front.
var names = {
  identity: 'id-${token}'
  storage: 'st${token}'
  logAnalytics: 'log-${token}'
  applicationInsights: 'appi-${token}'
  serviceBus: 'sb-${token}'
  cosmos: 'cosmos-${token}'
  functionApp: 'func-${token}'
  plan: 'plan-${token}'
  keyVault: 'kv-${token}'
  network: 'vnet-${token}'
}
var carrierApiKeySecretName = 'carrier-api-key'
var retryStateSigningKeySecretName = 'retry-state-signing-key'
var retryStateSigningKeyPreviousSecretName = 'retry-state-signing-key-previous'
var fulfilmentSubscriptionName = 'fulfilment'
var auditSubscriptionName = 'audit'
var deploymentContainerName = 'app-package'
var carrierConfigured = !empty(carrierApiUrl)
var cosmosDatabaseName = 'orders'
var cosmosContainerName = 'orders'
var cosmosLeasesContainerName = 'leases'
// The outbox publisher's destination for OrderAccepted; the topic and its subscriptions come from the queue file.
var orderEventsTopicName = 'order-events'

resource resourceGroup 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: 'rg-${environmentName}'
  location: location
  tags: tags
}

module identity 'modules/identity.bicep' = {
  scope: resourceGroup
  name: 'identity'
  params: { name: names.identity, location: location, tags: tags }
}

module network 'modules/network.bicep' = if (vnetEnabled) {
  scope: resourceGroup
  name: 'network'
  params: { name: names.network, location: location, tags: tags }
}

module storage 'modules/storage.bicep' = {
  scope: resourceGroup
  name: 'storage'
  params: { name: names.storage, location: location, tags: tags, deploymentContainerName: deploymentContainerName, privateOnly: vnetEnabled }
}

module monitoring 'modules/monitoring.bicep' = {
  scope: resourceGroup
  name: 'monitoring'
  params: { logAnalyticsName: names.logAnalytics, applicationInsightsName: names.applicationInsights, location: location, tags: tags, retentionInDays: logRetentionDays }
}

module serviceBus 'modules/serviceBus.bicep' = {
  scope: resourceGroup
  name: 'serviceBus'
  params: { name: names.serviceBus, location: location, tags: tags, queues: queueFile.queues, topics: queueFile.?topics ?? {}, sku: serviceBusSku, privateOnly: vnetEnabled }
}

module cosmos 'modules/cosmos.bicep' = {
  scope: resourceGroup
  name: 'cosmos'
  params: { name: names.cosmos, location: location, tags: tags, databaseName: cosmosDatabaseName, containerName: cosmosContainerName, leasesContainerName: cosmosLeasesContainerName, privateOnly: vnetEnabled }
}

module keyVault 'modules/keyVault.bicep' = {
  scope: resourceGroup
  name: 'keyVault'
  params: {
    name: names.keyVault
    location: location
    tags: tags
    carrierApiKeySecretName: carrierApiKeySecretName
    carrierApiKey: carrierApiKey
    retryStateSigningKeySecretName: retryStateSigningKeySecretName
    retryStateSigningKey: retryStateSigningKey
    retryStateSigningKeyPreviousSecretName: retryStateSigningKeyPreviousSecretName
    retryStateSigningKeyPrevious: retryStateSigningKeyPrevious
    purgeProtection: keyVaultPurgeProtection
    privateOnly: vnetEnabled
  }
}

module functionApp 'modules/functionApp.bicep' = {
  scope: resourceGroup
  name: 'functionApp'
  // With vnetEnabled the host's storage is reachable only through its endpoint: the app starts after it exists.
  dependsOn: [privateEndpoints]
  params: {
    name: names.functionApp
    planName: names.plan
    location: location
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: storage.outputs.deploymentContainerName
    applicationInsightsConnectionString: monitoring.outputs.applicationInsightsConnectionString
    serviceBusNamespace: serviceBus.outputs.fullyQualifiedNamespace
    ordersQueueName: ordersQueueName
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabaseName: cosmos.outputs.databaseName
    cosmosContainerName: cosmos.outputs.containerName
    cosmosLeasesContainerName: cosmos.outputs.leasesContainerName
    orderEventsTopicName: orderEventsTopicName
    fulfilmentSubscriptionName: fulfilmentSubscriptionName
    carrierApiUrl: carrierApiUrl
    keyVaultName: keyVault.outputs.name
    carrierApiKeySecretName: carrierApiKeySecretName
    retryStateSigningKeySecretName: retryStateSigningKeySecretName
    retryStateSigningKeyPreviousSecretName: retryStateSigningKeyPreviousSecretName
    virtualNetworkSubnetId: vnetEnabled ? network!.outputs.appSubnetId : ''
    intakeAuthEnabled: intakeAuthEnabled
    intakeAuthClientId: intakeAuthClientId
    // The retention check at start-up reads these: they must be the queue's real properties.
    retentionSettings: {
      QUEUE_MAX_DELIVERY_COUNT: orders.maxDeliveryCount
      QUEUE_LOCK_DURATION_SECONDS: orders.lockDurationSeconds
      QUEUE_MESSAGE_TTL_SECONDS: orders.defaultMessageTimeToLiveSeconds
      LOCK_RENEWAL_MAX_SECONDS: queueFile.operations.lockRenewalMaxSeconds
      TRANSIENT_RETRY_BUDGET_SECONDS: queueFile.operations.transientRetryBudgetSeconds
      DLQ_RESUBMIT_HORIZON_SECONDS: queueFile.operations.deadLetterResubmitHorizonSeconds
      INBOX_MARKER_TTL_SECONDS: queueFile.operations.inboxMarkerTtlSeconds
      // Not retention, but the same rule: the app's error line and the alert share one threshold.
      OUTBOX_LAG_ALERT_SECONDS: outboxLagAlertSeconds
    }
  }
}

module alerts 'modules/alerts.bicep' = {
  scope: resourceGroup
  name: 'alerts'
  dependsOn: [monitoring, serviceBus]
  params: {
    applicationInsightsName: names.applicationInsights
    serviceBusNamespaceName: names.serviceBus
    location: location
    tags: tags
    alertEmail: alertEmail
    outboxLagAlertSeconds: outboxLagAlertSeconds
    duplicateRatioPercent: duplicateRatioPercent
  }
}

// Private endpoints need the services they lead to; the names are known up front.
module privateEndpoints 'modules/privateEndpoints.bicep' = if (vnetEnabled) {
  scope: resourceGroup
  name: 'privateEndpoints'
  dependsOn: [storage, serviceBus, cosmos, keyVault]
  params: {
    location: location
    tags: tags
    virtualNetworkId: network!.outputs.id
    subnetId: network!.outputs.privateEndpointSubnetId
    cosmosAccountName: names.cosmos
    storageAccountName: names.storage
    keyVaultName: names.keyVault
    serviceBusName: names.serviceBus
    serviceBusPrivateLink: serviceBusSku == 'Premium'
  }
}

module diagnostics 'modules/diagnostics.bicep' = {
  scope: resourceGroup
  name: 'diagnostics'
  dependsOn: [monitoring, storage, serviceBus, cosmos, keyVault, functionApp]
  params: {
    logAnalyticsName: names.logAnalytics
    cosmosAccountName: names.cosmos
    serviceBusName: names.serviceBus
    keyVaultName: names.keyVault
    storageAccountName: names.storage
    functionAppName: names.functionApp
  }
}

module rbac 'modules/rbac.bicep' = {
  scope: resourceGroup
  name: 'rbac'
  // The names are known up front; these are the modules that create what the roles are granted on.
  dependsOn: [identity, monitoring, serviceBus, cosmos, keyVault]
  params: {
    appIdentityName: names.identity
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
    deployerPrincipalId: grantDeployerDataAccess ? principalId : ''
    deployerPrincipalType: principalType
    serviceBusName: names.serviceBus
    ordersQueueName: ordersQueueName
    orderEventsTopicName: orderEventsTopicName
    fulfilmentSubscriptionName: fulfilmentSubscriptionName
    auditSubscriptionName: auditSubscriptionName
    cosmosAccountName: names.cosmos
    cosmosDatabaseName: cosmosDatabaseName
    cosmosContainerName: cosmosContainerName
    cosmosLeasesContainerName: cosmosLeasesContainerName
    keyVaultName: names.keyVault
    carrierApiKeySecretName: carrierApiKeySecretName
    retryStateSigningKeySecretName: retryStateSigningKeySecretName
    retryStateSigningKeyPreviousSecretName: retryStateSigningKeyPreviousSecretName
    carrierConfigured: carrierConfigured
    storageAccountName: names.storage
    hostContainerNames: concat([deploymentContainerName], storage.outputs.hostContainerNames)
    applicationInsightsName: names.applicationInsights
  }
}

// Written to the azd environment; hooks/writeLocalSettings.cjs turns them into local.settings.json.
output AZURE_LOCATION string = location
output AZURE_RESOURCE_GROUP string = resourceGroup.name
output AZURE_FUNCTION_APP_NAME string = functionApp.outputs.name
// POST here with a function key (x-functions-key) and an Idempotency-Key: README, "HTTP intake".
output ORDER_INTAKE_URL string = 'https://${functionApp.outputs.defaultHostName}/api/orders'
output SERVICEBUS_FULLY_QUALIFIED_NAMESPACE string = serviceBus.outputs.fullyQualifiedNamespace
output ORDERS_QUEUE_NAME string = ordersQueueName
output COSMOS_ENDPOINT string = cosmos.outputs.endpoint
output COSMOS_DATABASE string = cosmos.outputs.databaseName
output COSMOS_ORDERS_CONTAINER string = cosmos.outputs.containerName
output COSMOS_LEASES_CONTAINER string = cosmos.outputs.leasesContainerName
output ORDER_EVENTS_TOPIC_NAME string = orderEventsTopicName
output FULFILMENT_SUBSCRIPTION_NAME string = fulfilmentSubscriptionName
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output QUEUE_MAX_DELIVERY_COUNT int = orders.maxDeliveryCount
output QUEUE_LOCK_DURATION_SECONDS int = orders.lockDurationSeconds
output QUEUE_MESSAGE_TTL_SECONDS int = orders.defaultMessageTimeToLiveSeconds
output LOCK_RENEWAL_MAX_SECONDS int = queueFile.operations.lockRenewalMaxSeconds
output TRANSIENT_RETRY_BUDGET_SECONDS int = queueFile.operations.transientRetryBudgetSeconds
output DLQ_RESUBMIT_HORIZON_SECONDS int = queueFile.operations.deadLetterResubmitHorizonSeconds
output INBOX_MARKER_TTL_SECONDS int = queueFile.operations.inboxMarkerTtlSeconds
