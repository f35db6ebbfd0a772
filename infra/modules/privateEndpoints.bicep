// Private endpoints of a vnetEnabled deployment: for each data plane a private DNS zone linked to
// the network, the endpoint in the private-endpoint subnet, and a DNS zone group, so the service's
// public name resolves to the endpoint's address inside the network. Zone names and group ids are
// Azure's published ones ("Azure Private Endpoint private DNS zone values"): Cosmos DB for NoSQL
// `Sql` -> privatelink.documents.azure.com, Blob `blob` -> privatelink.blob.<storage suffix>,
// Key Vault `vault` -> privatelink.vaultcore.azure.net, Service Bus `namespace` ->
// privatelink.servicebus.windows.net (Premium only: Standard namespaces have no private endpoints).
// The Functions host uses Blob only (host storage, timers' schedule and locks, function keys, the
// deployment package); Queue and Table serve Durable Functions, blob triggers and MCP, which this app
// does not use, so they get no endpoint (as in the Flex Consumption azd quickstarts' storageEndpointConfig).
@description('Azure region of the endpoints.')
param location string

@description('Tags for the endpoints and zones.')
param tags object

@description('Resource id of the virtual network the zones are linked to.')
param virtualNetworkId string

@description('Resource id of the subnet the endpoints are placed in.')
param subnetId string

@description('Cosmos DB account name.')
param cosmosAccountName string

@description('Host storage account name.')
param storageAccountName string

@description('Key Vault name.')
param keyVaultName string

@description('Service Bus namespace name.')
param serviceBusName string

@description('Whether the namespace gets an endpoint: true on Premium only.')
param serviceBusPrivateLink bool

var endpoints = concat(
  [
    { key: 'cosmos', serviceId: resourceId('Microsoft.DocumentDB/databaseAccounts', cosmosAccountName), groupId: 'Sql', zone: 'privatelink.documents.azure.com' }
    { key: 'blob', serviceId: resourceId('Microsoft.Storage/storageAccounts', storageAccountName), groupId: 'blob', zone: 'privatelink.blob.${environment().suffixes.storage}' }
    { key: 'vault', serviceId: resourceId('Microsoft.KeyVault/vaults', keyVaultName), groupId: 'vault', zone: 'privatelink.vaultcore.azure.net' }
  ],
  serviceBusPrivateLink
    ? [{ key: 'servicebus', serviceId: resourceId('Microsoft.ServiceBus/namespaces', serviceBusName), groupId: 'namespace', zone: 'privatelink.servicebus.windows.net' }]
    : []
)

resource zone 'Microsoft.Network/privateDnsZones@2020-06-01' = [
  for e in endpoints: {
    name: e.zone
    location: 'global'
    tags: tags
  }
]

resource link 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [
  for (e, i) in endpoints: {
    parent: zone[i]
    name: 'link-${e.key}'
    location: 'global'
    tags: tags
    properties: {
      registrationEnabled: false
      virtualNetwork: { id: virtualNetworkId }
    }
  }
]

resource endpoint 'Microsoft.Network/privateEndpoints@2024-05-01' = [
  for e in endpoints: {
    name: 'pe-${e.key}'
    location: location
    tags: tags
    properties: {
      subnet: { id: subnetId }
      privateLinkServiceConnections: [
        { name: e.key, properties: { privateLinkServiceId: e.serviceId, groupIds: [e.groupId] } }
      ]
    }
  }
]

resource zoneGroup 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2024-05-01' = [
  for (e, i) in endpoints: {
    parent: endpoint[i]
    name: 'default'
    properties: {
      privateDnsZoneConfigs: [{ name: e.key, properties: { privateDnsZoneId: zone[i].id } }]
    }
  }
]
