// The Functions app on Flex Consumption, Node 22, reaching every service with its managed identity:
// no key, connection string or secret appears in its settings.
@description('Name of the Function App.')
param name string

@description('Name of the Flex Consumption plan.')
param planName string

@description('Azure region of the app and plan.')
param location string

@description('Tags for the app and plan; the app adds azd-service-name.')
param tags object

@description('Resource id of the user-assigned managed identity.')
param identityId string

@description('Client id of that identity, for the identity-based connection settings.')
param identityClientId string

@description('Name of the host storage account.')
param storageAccountName string

@description('Blob endpoint of the host storage account.')
param storageBlobEndpoint string

@description('Blob container for the deployment package.')
param deploymentContainerName string

@description('Application Insights connection string (resource and endpoint; not a secret).')
param applicationInsightsConnectionString string

@description('Fully qualified Service Bus namespace, e.g. sb-x.servicebus.windows.net.')
param serviceBusNamespace string

@description('The queue the trigger listens to.')
param ordersQueueName string

@description('Cosmos DB endpoint.')
param cosmosEndpoint string

@description('Cosmos DB database name.')
param cosmosDatabaseName string

@description('Cosmos DB orders container name.')
param cosmosContainerName string

@description('Leases container of the outbox publisher\'s Cosmos DB trigger.')
param cosmosLeasesContainerName string

@description('The topic that outbox events are published to.')
param orderEventsTopicName string

@description('App settings that carry queue properties and retention, from infra/servicebus-queues.json.')
param retentionSettings object

@description('The subscription of the order-events topic that requestShipment reads.')
param fulfilmentSubscriptionName string

@description('Base URL of the carrier API; empty disables the two shipment functions.')
param carrierApiUrl string

@description('Key Vault holding the carrier API key.')
param keyVaultName string

@description('Name of the secret with the carrier API key.')
param carrierApiKeySecretName string

@description('Name of the secret with the retry state signing key.')
param retryStateSigningKeySecretName string

@description('Name of the secret with the key before the last rotation (the current key outside a rotation).')
param retryStateSigningKeyPreviousSecretName string

@description('Whether App Service authentication (Entra ID) refuses unauthenticated requests, and the app scopes keys by principal.')
param intakeAuthEnabled bool = false

@description('Client id of the app registration callers get tokens for; with intakeAuthEnabled.')
param intakeAuthClientId string = ''

@description('Subnet the app integrates with, so its outbound traffic reaches the private endpoints; empty: no integration.')
param virtualNetworkSubnetId string = ''

// Without a carrier the shipment functions stay off, and their events wait on the subscription.
// The key's reference comes only with a carrier: the platform leaves a reference it cannot resolve
// (no secret yet, no role on it) as its literal text, which the app's start-up validation refuses.
var shipmentSettings = empty(carrierApiUrl)
  ? {
      'AzureWebJobs.requestShipment.Disabled': 'true'
      'AzureWebJobs.reconcileShipments.Disabled': 'true'
    }
  : {
      CARRIER_API_URL: carrierApiUrl
      // Resolved by the platform with the identity named in keyVaultReferenceIdentity; the app sees the key itself.
      CARRIER_API_KEY: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${carrierApiKeySecretName})'
    }

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: { tier: 'FlexConsumption', name: 'FC1' }
  properties: { reserved: true }
}

var appSettings = union(
  {
    AzureWebJobsStorage__accountName: storageAccountName
    AzureWebJobsStorage__credential: 'managedidentity'
    AzureWebJobsStorage__clientId: identityClientId
    ServiceBusConnection__fullyQualifiedNamespace: serviceBusNamespace
    ServiceBusConnection__credential: 'managedidentity'
    ServiceBusConnection__clientId: identityClientId
    ORDERS_QUEUE_NAME: ordersQueueName
    COSMOS_ENDPOINT: cosmosEndpoint
    COSMOS_DATABASE: cosmosDatabaseName
    COSMOS_ORDERS_CONTAINER: cosmosContainerName
    COSMOS_LEASES_CONTAINER: cosmosLeasesContainerName
    // The outbox publisher's Cosmos DB trigger connects by identity, like the app's own client.
    CosmosDbConnection__accountEndpoint: cosmosEndpoint
    CosmosDbConnection__credential: 'managedidentity'
    CosmosDbConnection__clientId: identityClientId
    ORDER_EVENTS_TOPIC_NAME: orderEventsTopicName
    // Signs delayed-retry state; resolved by the platform with the app identity (its role is on this one secret).
    RETRY_STATE_SIGNING_KEY: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${retryStateSigningKeySecretName})'
    // Also accepted when verifying (never signs): a rotation does not restart the budgets in flight.
    RETRY_STATE_SIGNING_KEY_PREVIOUS: '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName=${retryStateSigningKeyPreviousSecretName})'
    // The outbox sweeper's timer: every minute, at second 30 (apart from the parked-item sweeper).
    OUTBOX_SWEEP_SCHEDULE: '30 */1 * * * *'
    // The parked-item sweeper's timer (NCRONTAB, UTC): every five minutes.
    PARKED_SWEEP_SCHEDULE: '0 */5 * * * *'
    FULFILMENT_SUBSCRIPTION_NAME: fulfilmentSubscriptionName
    // The reconciler's timer: every two minutes, at second 45.
    SHIPMENT_RECONCILE_SCHEDULE: '45 */2 * * * *'
    // DefaultAzureCredential (the Cosmos client) picks the user-assigned identity by this.
    AZURE_CLIENT_ID: identityClientId
    APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsightsConnectionString
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
    // Nothing sampled, in the host's exporter and the worker's distro alike: with telemetryMode OpenTelemetry the
    // host does not read host.json's samplingSettings, and its exporter's default is 5 traces a second (docs/operations.md).
    OTEL_TRACES_SAMPLER: 'microsoft.fixed_percentage'
    OTEL_TRACES_SAMPLER_ARG: '1.0'
    // The principal headers are the platform's only behind App Service authentication, which strips
    // any a client sends; without it, one shared key scope (the app ignores them).
    INTAKE_CALLER_IDENTITY: intakeAuthEnabled ? 'entra' : 'shared'
  },
  retentionSettings,
  shipmentSettings
)

resource app 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: { '${identityId}': {} }
  }
  properties: {
    serverFarmId: plan.id
    // Flex Consumption routes the app's outbound traffic through this subnet (delegated to
    // Microsoft.App/environments); the private DNS zones linked to the network resolve the data planes.
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    httpsOnly: true
    // Key Vault references resolve with the user-assigned identity (the default is a system-assigned one, which this app has not).
    keyVaultReferenceIdentity: identityId
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      appSettings: [for setting in items(appSettings): { name: setting.key, value: string(setting.value) }]
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainerName}'
          authentication: { type: 'UserAssignedIdentity', userAssignedIdentityResourceId: identityId }
        }
      }
      scaleAndConcurrency: { maximumInstanceCount: 40, instanceMemoryMB: 2048 }
      runtime: { name: 'node', version: '22' }
    }
  }
}

// App Service authentication ("Easy Auth", V2 settings, which Flex Consumption apps take like any
// Linux function app): every request needs an Entra ID token for the intake's app registration,
// else 401 before the worker runs; the worker reads the caller from x-ms-client-principal, which
// the platform sets and no client can. No token store: the intake is an API, it keeps no sessions.
resource intakeAuth 'Microsoft.Web/sites/config@2024-04-01' = if (intakeAuthEnabled) {
  parent: app
  name: 'authsettingsV2'
  properties: {
    platform: { enabled: true }
    globalValidation: { requireAuthentication: true, unauthenticatedClientAction: 'Return401' }
    httpSettings: { requireHttps: true }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: { clientId: intakeAuthClientId, openIdIssuer: '${environment().authentication.loginEndpoint}${subscription().tenantId}/v2.0' }
        // v2.0 tokens carry the client id as audience, v1.0 tokens the application id URI.
        validation: { allowedAudiences: [intakeAuthClientId, 'api://${intakeAuthClientId}'] }
      }
    }
    login: { tokenStore: { enabled: false } }
  }
}

// Deployments go through azd with Entra ID; basic (user name and password) publishing stays off.
resource ftpCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: app
  name: 'ftp'
  properties: { allow: false }
}

resource scmCredentials 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: app
  name: 'scm'
  properties: { allow: false }
}

output name string = app.name
output defaultHostName string = app.properties.defaultHostName
