// The vault for the carrier API key: RBAC authorization (no access policies), soft delete with purge
// protection (a deleted key can be recovered, never destroyed early), and the key itself when the
// deployment is given one. The app reads it through a Key Vault reference app setting.
@description('Key Vault name (3 to 24 characters).')
param name string

@description('Azure region of the vault.')
param location string

@description('Tags for the vault.')
param tags object

@description('Name of the secret that holds the carrier API key.')
param carrierApiKeySecretName string

@secure()
@description('The carrier API key. Empty: no secret is written; set it later with az keyvault secret set.')
param carrierApiKey string = ''

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    // Once on it cannot be turned off: a purge waits out the retention, so no one erases the key early.
    enablePurgeProtection: true
    publicNetworkAccess: 'Enabled'
  }
}

resource carrierKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(carrierApiKey)) {
  parent: vault
  name: carrierApiKeySecretName
  properties: { value: carrierApiKey, contentType: 'text/plain' }
}

output name string = vault.name
output uri string = vault.properties.vaultUri
