// Diagnostic settings: every resource that has resource logs sends them to the Log Analytics
// workspace. `allLogs` is the category group that contains every category, the `audit` group
// included (Key Vault AuditEvent, Cosmos DB DataPlaneRequests and ControlPlaneRequests, Service Bus
// OperationalLogs and RuntimeAuditLogs, Storage StorageRead/Write/Delete, FunctionAppLogs), so one
// group covers both. Resource-specific tables ('Dedicated') where the service offers them.
// Application Insights is not here: it is workspace-based, so its telemetry already lands in the
// same workspace. Platform metrics stay in Azure Monitor metrics, where the alerts read them.
@description('Log Analytics workspace that receives every resource log.')
param logAnalyticsName string

@description('Cosmos DB account name.')
param cosmosAccountName string

@description('Service Bus namespace name.')
param serviceBusName string

@description('Key Vault name.')
param keyVaultName string

@description('Host storage account name (its blob service is the one the app uses).')
param storageAccountName string

@description('Function App name.')
param functionAppName string

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' existing = {
  name: logAnalyticsName
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

resource serviceBus 'Microsoft.ServiceBus/namespaces@2024-01-01' existing = {
  name: serviceBusName
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName

  resource blobs 'blobServices' existing = {
    name: 'default'
  }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

var settingName = 'to-log-analytics'
var allLogs = [{ categoryGroup: 'allLogs', enabled: true }]

resource cosmosLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: cosmos
  name: settingName
  properties: { workspaceId: workspace.id, logAnalyticsDestinationType: 'Dedicated', logs: allLogs }
}

resource serviceBusLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: serviceBus
  name: settingName
  properties: { workspaceId: workspace.id, logAnalyticsDestinationType: 'Dedicated', logs: allLogs }
}

resource vaultLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: vault
  name: settingName
  properties: { workspaceId: workspace.id, logAnalyticsDestinationType: 'Dedicated', logs: allLogs }
}

resource blobLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: storage::blobs
  name: settingName
  properties: { workspaceId: workspace.id, logs: allLogs }
}

// App Service logs always go to their own tables (FunctionAppLogs, ...).
resource functionAppLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: functionApp
  name: settingName
  properties: { workspaceId: workspace.id, logs: allLogs }
}

// The workspace's own audit log: who queried what.
resource workspaceLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  scope: workspace
  name: settingName
  properties: { workspaceId: workspace.id, logs: allLogs }
}
