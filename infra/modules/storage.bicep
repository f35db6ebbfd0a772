// The Functions host's storage (AzureWebJobsStorage) and the Flex Consumption deployment container.
// Shared keys are off: the app reaches it with its managed identity only. The containers the host
// writes are created here, so the app's role can be scoped to them instead of the account.
@description('Name of the storage account (3-24 lowercase letters and digits).')
param name string

@description('Azure region of the account.')
param location string

@description('Tags for the account.')
param tags object

@description('Blob container that Flex Consumption deploys the app package from.')
param deploymentContainerName string

@description('Whether the account is reached through a private endpoint only (public network access off).')
param privateOnly bool = false

// The Functions host keeps its locks, its host id lease and the timers' schedule status in
// azure-webjobs-hosts, and the function keys (submitOrder's key) in azure-webjobs-secrets.
var hostContainerNames = ['azure-webjobs-hosts', 'azure-webjobs-secrets']

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: { name: 'Standard_LRS' }
  properties: {
    allowSharedKeyAccess: false
    allowBlobPublicAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: privateOnly ? 'Disabled' : 'Enabled'
    // Private: no exception, not even for "trusted" Azure services (PSRule Azure.Storage.Firewall).
    networkAcls: privateOnly ? { defaultAction: 'Deny', bypass: 'None' } : { defaultAction: 'Allow', bypass: 'AzureServices' }
  }
}

resource blobs 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobs
  name: deploymentContainerName
}

resource hostContainers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [
  for containerName in hostContainerNames: {
    parent: blobs
    name: containerName
  }
]

output name string = storage.name
output blobEndpoint string = storage.properties.primaryEndpoints.blob
output deploymentContainerName string = deploymentContainer.name
output hostContainerNames string[] = [for (containerName, i) in hostContainerNames: hostContainers[i].name]
