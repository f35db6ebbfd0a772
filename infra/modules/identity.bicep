// The app's one identity: every data-plane call (Service Bus, Cosmos DB, Storage, telemetry) uses it.
@description('Name of the user-assigned managed identity.')
param name string

@description('Azure region of the identity.')
param location string

@description('Tags for the identity.')
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output name string = identity.name
output clientId string = identity.properties.clientId
output principalId string = identity.properties.principalId
