import type { RegisteredFunction } from './functionsCore.js';
import { resolveBindingExpression } from './hostSettings.js';
import { retryPolicyOf } from './retryPolicy.js';
import type { RetryPolicy } from './retryPolicy.js';

/** The Cosmos DB extension's defaults (host.json `extensions.cosmosDB` and the trigger's own properties). */
export const cosmosTriggerDefaults = {
  feedPollDelayMs: 5000,
  leaseAcquireIntervalMs: 13_000,
  leaseExpirationIntervalMs: 60_000,
  leaseRenewIntervalMs: 17_000,
  maxItemsPerInvocation: 100,
  leaseContainerName: 'leases',
} as const;

export type CosmosTriggerInterval = 'feedPollDelayMs' | 'leaseAcquireIntervalMs' | 'leaseExpirationIntervalMs' | 'leaseRenewIntervalMs';

/** A Cosmos DB trigger's binding with its `%SETTING%` expressions resolved and its defaults filled in. */
export interface CosmosTriggerBinding {
  readonly functionName: string;
  readonly databaseName: string;
  readonly containerName: string;
  /** App setting names: the monitored account's, and the leases' when they live elsewhere. */
  readonly connection: string;
  readonly leaseConnection?: string;
  readonly leaseDatabaseName: string;
  readonly leaseContainerName: string;
  readonly createLeaseContainerIfNotExists: boolean;
  /** What this function's lease ids start with: the host's `leaseContainerPrefix` and the monitored container. */
  readonly leasePrefix: string;
  readonly intervals: Readonly<Record<CosmosTriggerInterval, number>>;
  readonly maxItemsPerInvocation: number;
  readonly startFromBeginning: boolean;
  readonly startFromTime?: Date;
  readonly retry: RetryPolicy;
}

/** Reads the trigger's binding as the extension does; a missing required property names the function. */
export function readCosmosTriggerBinding(
  fn: RegisteredFunction,
  trigger: Record<string, unknown>,
  settings: Readonly<Record<string, string>>,
  intervalOverrides: Partial<Record<CosmosTriggerInterval, number>> = {},
): CosmosTriggerBinding {
  const functionName = fn.metadata.name;
  const text = (key: string) => (trigger[key] === undefined ? undefined : resolveBindingExpression(String(trigger[key]), settings));
  const databaseName = required(functionName, 'databaseName', text('databaseName'));
  const containerName = required(functionName, 'containerName', text('containerName'));
  const startFromTime = text('startFromTime');
  return {
    functionName,
    databaseName,
    containerName,
    connection: required(functionName, 'connection', text('connection')),
    leaseConnection: text('leaseConnection') || undefined,
    leaseDatabaseName: text('leaseDatabaseName') ?? databaseName,
    leaseContainerName: text('leaseContainerName') ?? cosmosTriggerDefaults.leaseContainerName,
    createLeaseContainerIfNotExists: trigger.createLeaseContainerIfNotExists === true,
    leasePrefix: `${text('leaseContainerPrefix') ?? ''}${databaseName}_${containerName}`,
    intervals: { ...cosmosTriggerDefaults, ...intervalsOf(trigger), ...intervalOverrides },
    maxItemsPerInvocation: typeof trigger.maxItemsPerInvocation === 'number' ? trigger.maxItemsPerInvocation : cosmosTriggerDefaults.maxItemsPerInvocation,
    startFromBeginning: trigger.startFromBeginning === true,
    startFromTime: startFromTime ? new Date(startFromTime) : undefined,
    retry: retryPolicyOf(functionName, fn.metadata.retryOptions),
  };
}

/** The trigger's own intervals (in ms, as the Node library passes them), those it sets. */
function intervalsOf(trigger: Record<string, unknown>): Partial<Record<CosmosTriggerInterval, number>> {
  const pick = (key: string) => (typeof trigger[key] === 'number' ? (trigger[key] as number) : undefined);
  const entries = {
    feedPollDelayMs: pick('feedPollDelay'),
    leaseAcquireIntervalMs: pick('leaseAcquireInterval'),
    leaseExpirationIntervalMs: pick('leaseExpirationInterval'),
    leaseRenewIntervalMs: pick('leaseRenewInterval'),
  };
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));
}

function required(functionName: string, property: string, value: string | undefined): string {
  if (!value) throw new Error(`${functionName}: the Cosmos DB trigger has no ${property}`);
  return value;
}
