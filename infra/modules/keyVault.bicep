// The vault for the carrier API key: RBAC authorization (no access policies), soft delete (always
// on: Key Vault no longer lets it be turned off), purge protection when asked for, and the key itself
// when the deployment is given one. The app reads it through a Key Vault reference app setting.
@description('Key Vault name (3 to 24 characters).')
param name string

@description('Azure region of the vault.')
param location string

@description('Tags for the vault.')
param tags object

@description('Name of the secret that holds the carrier API key.')
param carrierApiKeySecretName string

@secure()
@description('The carrier API key. Empty: nothing is written, and an existing secret is kept.')
param carrierApiKey string = ''

@description('Name of the secret that signs delayed-retry state (RETRY_STATE_SIGNING_KEY).')
param retryStateSigningKeySecretName string

@secure()
@description('The retry state signing key: always written, every instance reads the same one.')
param retryStateSigningKey string

@description('Name of the secret that holds the key before the last rotation (RETRY_STATE_SIGNING_KEY_PREVIOUS).')
param retryStateSigningKeyPreviousSecretName string

@secure()
@description('The key before the last rotation; empty: no rotation under way.')
param retryStateSigningKeyPrevious string = ''

@description('Purge protection: a deleted vault or secret cannot be purged before the retention ends. Irreversible once on; while on, a deleted vault blocks its name for the retention (docs/deployment.md, "Tearing down").')
param purgeProtection bool = true

@description('Whether the vault is reached through a private endpoint only (public network access off).')
param privateOnly bool = false

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
    // Omitted rather than false when off: Azure refuses false on a vault that already has it, so a
    // development vault created with it on can still be provisioned with the development parameters.
    enablePurgeProtection: purgeProtection ? true : null
    publicNetworkAccess: privateOnly ? 'Disabled' : 'Enabled'
    // Private: deny by default (PSRule Azure.KeyVault.Firewall asks for defaultAction Deny); trusted
    // Microsoft services keep the bypass that rule allows.
    networkAcls: privateOnly ? { defaultAction: 'Deny', bypass: 'AzureServices' } : { defaultAction: 'Allow', bypass: 'AzureServices' }
  }
}

resource carrierKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = if (!empty(carrierApiKey)) {
  parent: vault
  name: carrierApiKeySecretName
  properties: { value: carrierApiKey, contentType: 'text/plain' }
}

resource retryStateKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: retryStateSigningKeySecretName
  properties: { value: retryStateSigningKey, contentType: 'text/plain' }
}

// Always written, so the app setting that references it always resolves: outside a rotation it holds
// the current key again, so an old key stops being accepted as soon as the rotation is over.
resource retryStatePreviousKey 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: retryStateSigningKeyPreviousSecretName
  properties: { value: empty(retryStateSigningKeyPrevious) ? retryStateSigningKey : retryStateSigningKeyPrevious, contentType: 'text/plain' }
}

output name string = vault.name
output uri string = vault.properties.vaultUri
