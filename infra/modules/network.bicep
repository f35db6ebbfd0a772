// The virtual network of a vnetEnabled deployment: one subnet the Flex Consumption app joins
// (delegated to Microsoft.App/environments, as Flex Consumption requires and as Microsoft's
// Flex Consumption azd quickstarts delegate it: Azure-Samples/functions-quickstart-typescript-azd-cosmosdb,
// infra/app/vnet.bicep), and one for the private endpoints of the data planes.
@description('Name of the virtual network.')
param name string

@description('Azure region of the network.')
param location string

@description('Tags for the network.')
param tags object

@description('Address space of the network.')
param addressPrefix string = '10.0.0.0/16'

@description('Subnet the Function App integrates with (outbound traffic); a /24 leaves room for scale-out.')
param appSubnetPrefix string = '10.0.1.0/24'

@description('Subnet that holds the private endpoints.')
param privateEndpointSubnetPrefix string = '10.0.2.0/24'

var appSubnetName = 'app'
var privateEndpointSubnetName = 'private-endpoints'

resource network 'Microsoft.Network/virtualNetworks@2024-05-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: { addressPrefixes: [addressPrefix] }
    subnets: [
      {
        name: appSubnetName
        properties: {
          addressPrefix: appSubnetPrefix
          delegations: [{ name: 'flex-consumption', properties: { serviceName: 'Microsoft.App/environments' } }]
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
      {
        name: privateEndpointSubnetName
        properties: {
          addressPrefix: privateEndpointSubnetPrefix
          privateEndpointNetworkPolicies: 'Disabled'
          privateLinkServiceNetworkPolicies: 'Enabled'
        }
      }
    ]
  }
}

output id string = network.id
output appSubnetId string = '${network.id}/subnets/${appSubnetName}'
output privateEndpointSubnetId string = '${network.id}/subnets/${privateEndpointSubnetName}'
