import type { Environment } from './environment.js';

/**
 * `AzureWebJobs.<name>.Disabled` (or `AzureWebJobs__<name>__Disabled`) set to true or 1: the host
 * starts no listener for the function, so its composition root need not (and must not) demand the
 * function's own settings. The Bicep disables the shipment functions when no carrier is configured.
 */
export function isFunctionDisabled(name: string, env: Environment = process.env): boolean {
  const value = env[`AzureWebJobs.${name}.Disabled`] ?? env[`AzureWebJobs__${name}__Disabled`];
  return value !== undefined && ['true', '1'].includes(value.trim().toLowerCase());
}
