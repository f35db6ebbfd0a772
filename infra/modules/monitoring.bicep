// Logs and telemetry. Local (instrumentation-key) auth is off: the app sends telemetry with Entra ID.
@description('Name of the Log Analytics workspace.')
param logAnalyticsName string

@description('Name of the Application Insights component.')
param applicationInsightsName string

@description('Azure region of both.')
param location string

@description('Tags for both.')
param tags object

@description('Days the workspace keeps logs (resource logs, audit events, the app\'s telemetry).')
@minValue(30)
@maxValue(730)
param retentionInDays int = 90

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: { name: 'PerGB2018' }
    retentionInDays: retentionInDays
    features: { disableLocalAuth: true }
  }
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalytics.id
    DisableLocalAuth: true
  }
}

output applicationInsightsName string = applicationInsights.name
// Not a secret: with local auth disabled it only names the ingestion endpoint and resource.
output applicationInsightsConnectionString string = applicationInsights.properties.ConnectionString
