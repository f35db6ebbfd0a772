import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandDeployment } from './armTemplate.js';
import type { DeployedResource, Deployment } from './armTemplate.js';
import { azdParameters } from './azdParameters.js';
import type { ParameterTypes } from './azdParameters.js';
import { bicepCli, buildTemplate } from './bicepCli.js';

const cli = bicepCli();
const deployerObjectId = '11111111-2222-3333-4444-555555555555';
const operatorsObjectId = '99999999-8888-7777-6666-555555555555';
// RETRY_STATE_SIGNING_KEY: what the preprovision hook (infra/hooks/ensureRetryStateSigningKey.cjs) put in the environment.
const signingKey = 'e'.repeat(64);
const azdEnvironment = {
  AZURE_ENV_NAME: 'ci',
  AZURE_LOCATION: 'westeurope',
  AZURE_PRINCIPAL_ID: deployerObjectId,
  OPERATOR_PRINCIPAL_ID: operatorsObjectId,
  RETRY_STATE_SIGNING_KEY: signingKey,
};

const parameterFiles = [
  { file: 'infra/main.parameters.json', private: false },
  { file: 'infra/main.production.parameters.json', private: true },
];

describe.runIf(cli !== undefined)('infra/main.bicep with each parameters file, as azd deploys it', () => {
  let template: { parameters: ParameterTypes };

  beforeAll(() => {
    const build = buildTemplate(cli ?? '', 'infra/main.bicep');
    expect({ status: build.status, diagnostics: build.diagnostics }).toEqual({ status: 0, diagnostics: '' });
    template = JSON.parse(build.compiled) as { parameters: ParameterTypes };
  }, 300_000);

  const deploymentWith = (file: string) => expandDeployment(template as never, azdParameters(file, azdEnvironment, template.parameters));
  const live = (d: Deployment, type: string) => d.resources.filter((r) => r.type === type && !r.existing);
  const one = (d: Deployment, type: string) => {
    const found = live(d, type);
    expect(found, type).toHaveLength(1);
    return found[0]!;
  };
  const props = (r: DeployedResource) => r.body.properties as Record<string, unknown>;

  it('both files set the same parameters, every one declared by the template', () => {
    const names = (file: string) => Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { parameters: object }).parameters).sort();
    expect(names('infra/main.production.parameters.json')).toEqual(names('infra/main.parameters.json'));
    for (const name of names('infra/main.parameters.json')) expect(template.parameters, name).toHaveProperty(name);
  });

  it('the production file: private networking, Premium Service Bus, purge protection, operators as a group, no data access for the pipeline', () => {
    const production = azdParameters('infra/main.production.parameters.json', azdEnvironment, template.parameters);
    expect(production).toMatchObject({
      vnetEnabled: true,
      serviceBusSku: 'Premium',
      keyVaultPurgeProtection: true,
      grantDeployerDataAccess: false,
      operatorPrincipalId: operatorsObjectId,
      operatorPrincipalType: 'Group',
      logRetentionDays: 90,
    });
    const development = azdParameters('infra/main.parameters.json', azdEnvironment, template.parameters);
    expect(development).toMatchObject({
      vnetEnabled: false,
      serviceBusSku: 'Standard',
      keyVaultPurgeProtection: false,
      grantDeployerDataAccess: true,
      logRetentionDays: 90,
    });
  });

  describe.each(parameterFiles)('$file', ({ file, private: isPrivate }) => {
    const publicAccess = isPrivate ? 'Disabled' : 'Enabled';

    it("passes the environment's retry state signing key (and the previous one, empty unless rotating) to Key Vault: the same key at every provision", () => {
      const values = (JSON.parse(readFileSync(file, 'utf8')) as { parameters: Record<string, { value: string }> }).parameters;
      expect([values.retryStateSigningKey?.value, values.retryStateSigningKeyPrevious?.value]).toEqual([
        '${RETRY_STATE_SIGNING_KEY}',
        '${RETRY_STATE_SIGNING_KEY_PREVIOUS=}',
      ]);
      const secrets = live(deploymentWith(file), 'Microsoft.KeyVault/vaults/secrets').map((r) => [
        r.name.split('/').pop(),
        (props(r) as { value: unknown }).value,
      ]);
      expect(secrets).toEqual([
        ['retry-state-signing-key', signingKey],
        ['retry-state-signing-key-previous', signingKey],
      ]);
      const rotating = expandDeployment(
        template as never,
        azdParameters(file, { ...azdEnvironment, RETRY_STATE_SIGNING_KEY: 'n'.repeat(64), RETRY_STATE_SIGNING_KEY_PREVIOUS: signingKey }, template.parameters),
      );
      expect(live(rotating, 'Microsoft.KeyVault/vaults/secrets').map((r) => (props(r) as { value: unknown }).value)).toEqual(['n'.repeat(64), signingKey]);
    });

    it(`turns public network access ${isPrivate ? 'off' : 'on'} on Cosmos DB, Storage, Key Vault and Service Bus`, () => {
      const d = deploymentWith(file);
      expect(props(one(d, 'Microsoft.DocumentDB/databaseAccounts'))).toMatchObject({ publicNetworkAccess: publicAccess, networkAclBypass: 'None' });
      expect(props(one(d, 'Microsoft.Storage/storageAccounts'))).toMatchObject({
        publicNetworkAccess: publicAccess,
        networkAcls: { defaultAction: isPrivate ? 'Deny' : 'Allow' },
      });
      expect(props(one(d, 'Microsoft.KeyVault/vaults'))).toMatchObject({
        publicNetworkAccess: publicAccess,
        networkAcls: { defaultAction: isPrivate ? 'Deny' : 'Allow' },
      });
      expect(props(one(d, 'Microsoft.ServiceBus/namespaces')).publicNetworkAccess).toBe(publicAccess);
      expect(one(d, 'Microsoft.ServiceBus/namespaces').body.sku).toEqual(
        isPrivate ? { name: 'Premium', tier: 'Premium', capacity: 1 } : { name: 'Standard', tier: 'Standard' },
      );
    });

    it(`${isPrivate ? 'integrates the app with a subnet delegated to Microsoft.App/environments' : 'creates no network and integrates the app with none'}`, () => {
      const d = deploymentWith(file);
      const app = props(one(d, 'Microsoft.Web/sites'));
      if (!isPrivate) {
        expect(d.resources.filter((r) => r.type.startsWith('Microsoft.Network/'))).toEqual([]);
        expect(app.virtualNetworkSubnetId).toBeNull();
        return;
      }
      const network = one(d, 'Microsoft.Network/virtualNetworks');
      const subnets = props(network).subnets as { name: string; properties: { delegations?: { properties: { serviceName: string } }[] } }[];
      expect(subnets.map((s) => [s.name, s.properties.delegations?.map((x) => x.properties.serviceName) ?? []])).toEqual([
        ['app', ['Microsoft.App/environments']],
        ['private-endpoints', []],
      ]);
      expect(app.virtualNetworkSubnetId).toMatch(new RegExp(`/virtualNetworks/${network.name}/subnets/app$`));
    });

    it(`${isPrivate ? 'gives each data plane a private endpoint, a private DNS zone linked to the network and a zone group' : 'creates no private endpoint'}`, () => {
      const d = deploymentWith(file);
      const endpoints = live(d, 'Microsoft.Network/privateEndpoints');
      if (!isPrivate) {
        expect(endpoints).toEqual([]);
        return;
      }
      const connections = endpoints.map((e) => {
        const connection = (props(e).privateLinkServiceConnections as { properties: { privateLinkServiceId: string; groupIds: string[] } }[])[0]!.properties;
        return {
          groupIds: connection.groupIds,
          service: connection.privateLinkServiceId.split('/providers/')[1]?.split('/').slice(0, 2).join('/'),
          subnet: String((props(e).subnet as { id: string }).id)
            .split('/')
            .pop(),
        };
      });
      expect(connections).toEqual([
        { groupIds: ['Sql'], service: 'Microsoft.DocumentDB/databaseAccounts', subnet: 'private-endpoints' },
        { groupIds: ['blob'], service: 'Microsoft.Storage/storageAccounts', subnet: 'private-endpoints' },
        { groupIds: ['vault'], service: 'Microsoft.KeyVault/vaults', subnet: 'private-endpoints' },
        { groupIds: ['namespace'], service: 'Microsoft.ServiceBus/namespaces', subnet: 'private-endpoints' },
      ]);
      const zones = live(d, 'Microsoft.Network/privateDnsZones').map((z) => z.name);
      expect(zones).toEqual([
        'privatelink.documents.azure.com',
        'privatelink.blob.core.windows.net',
        'privatelink.vaultcore.azure.net',
        'privatelink.servicebus.windows.net',
      ]);
      const network = one(d, 'Microsoft.Network/virtualNetworks');
      const links = live(d, 'Microsoft.Network/privateDnsZones/virtualNetworkLinks');
      expect(links.map((l) => l.name.split('/')[0])).toEqual(zones);
      for (const link of links)
        expect(props(link)).toEqual({
          registrationEnabled: false,
          virtualNetwork: { id: expect.stringMatching(new RegExp(`/virtualNetworks/${network.name}$`)) },
        });
      const groups = live(d, 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups');
      expect(
        groups.map((g) =>
          String((props(g).privateDnsZoneConfigs as { properties: { privateDnsZoneId: string } }[])[0]!.properties.privateDnsZoneId)
            .split('/')
            .pop(),
        ),
      ).toEqual(zones);
      expect(groups.map((g) => g.name.split('/')[0])).toEqual(endpoints.map((e) => e.name));
    });

    it('sends every resource log (category group allLogs, which holds audit) of Cosmos DB, Service Bus, Key Vault, Blob storage, the Function App and the workspace to the workspace, kept 90 days', () => {
      const d = deploymentWith(file);
      const workspace = one(d, 'Microsoft.OperationalInsights/workspaces');
      expect(props(workspace).retentionInDays).toBe(90);
      const settings = live(d, 'Microsoft.Insights/diagnosticSettings');
      // The scope's resource type: provider namespace, then every other segment (the names between them dropped).
      const typeOf = (scope: unknown) => {
        const [namespace, ...rest] = String(scope).split('/providers/')[1]!.split('/');
        return [namespace, ...rest.filter((_, i) => i % 2 === 0)].join('/');
      };
      expect(settings.map((s) => typeOf(s.scope)).sort()).toEqual(
        [
          'Microsoft.DocumentDB/databaseAccounts',
          'Microsoft.KeyVault/vaults',
          'Microsoft.OperationalInsights/workspaces',
          'Microsoft.ServiceBus/namespaces',
          'Microsoft.Storage/storageAccounts/blobServices',
          'Microsoft.Web/sites',
        ].sort(),
      );
      for (const setting of settings) {
        expect(props(setting).workspaceId).toMatch(new RegExp(`/Microsoft.OperationalInsights/workspaces/${workspace.name}$`));
        expect(props(setting).logs).toEqual([{ categoryGroup: 'allLogs', enabled: true }]);
      }
    });

    it(`${isPrivate ? 'turns purge protection on (irreversible)' : "leaves purge protection unset, so azd down --purge frees the vault's name"}`, () => {
      const vault = props(one(deploymentWith(file), 'Microsoft.KeyVault/vaults'));
      expect(vault).toMatchObject({ enableSoftDelete: true, softDeleteRetentionInDays: 90, enablePurgeProtection: isPrivate ? true : null });
    });
  });
});
