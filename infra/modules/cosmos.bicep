// Serverless Cosmos DB with the orders database and container. Keys are off (Entra ID only); the
// container is partitioned by /orderId and has TTL on with no default expiry, so that only documents
// with their own `ttl` (inbox markers, rejection records, published outbox entries) ever expire. The
// leases container beside it serves the outbox publisher's change feed trigger.
@description('Name of the Cosmos DB account.')
param name string

@description('Azure region of the account.')
param location string

@description('Tags for the account.')
param tags object

@description('Database name.')
param databaseName string

@description('Orders container name.')
param containerName string

@description('Leases container of the outbox publisher\'s Cosmos DB trigger.')
param leasesContainerName string

@description('Whether the account is reached through a private endpoint only (public network access off).')
param privateOnly bool = false

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [{ locationName: location, failoverPriority: 0 }]
    capabilities: [{ name: 'EnableServerless' }]
    consistencyPolicy: { defaultConsistencyLevel: 'Session' }
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    // Private: the endpoint only, and no exception for Azure services (PSRule Azure.Cosmos.PublicAccess;
    // the Cosmos DB Azure Verified Module turns public access off by default).
    publicNetworkAccess: privateOnly ? 'Disabled' : 'Enabled'
    networkAclBypass: 'None'
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: { resource: { id: databaseName } }
}

resource container 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: containerName
  properties: {
    resource: {
      id: containerName
      partitionKey: { paths: ['/orderId'], kind: 'Hash', version: 2 }
      defaultTtl: -1
      // The consumer uses point reads, and one in-partition query when an order finds parked items;
      // the parked-item sweeper and the operator tool filter by these fields. Nothing else is
      // indexed, which keeps writes (the hot path) cheap.
      indexingPolicy: {
        indexingMode: 'consistent'
        automatic: true
        includedPaths: [
          { path: '/docType/?' }
          { path: '/messageId/?' }
          { path: '/dedupKey/?' }
          { path: '/reason/?' }
          { path: '/rejectedAt/?' }
          { path: '/state/?' }
          { path: '/parkedAt/?' }
          // The outbox sweeper reads pending entries oldest first, one bounded page per run.
          { path: '/createdAt/?' }
          // The shipment reconciler's query: in-progress records whose lease ran out.
          { path: '/leaseExpiresAt/?' }
        ]
        excludedPaths: [{ path: '/*' }]
      }
    }
  }
}

// The Cosmos DB trigger keeps one lease per feed range of the orders container here. The trigger
// requires /id as the partition key; with an identity it cannot create the container itself.
resource leases 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = {
  parent: database
  name: leasesContainerName
  properties: {
    resource: {
      id: leasesContainerName
      partitionKey: { paths: ['/id'], kind: 'Hash', version: 2 }
    }
  }
}

output name string = account.name
output endpoint string = account.properties.documentEndpoint
output databaseName string = database.name
output containerName string = container.name
output leasesContainerName string = leases.name
