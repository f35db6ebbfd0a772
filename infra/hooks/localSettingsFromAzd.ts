/** The azd environment (outputs of infra/main.bicep), as `azd env get-values --output json` prints it. */
export type AzdEnvironment = Readonly<Record<string, string>>;

const required = ['SERVICEBUS_FULLY_QUALIFIED_NAMESPACE', 'ORDERS_QUEUE_NAME', 'COSMOS_ENDPOINT', 'COSMOS_DATABASE', 'COSMOS_ORDERS_CONTAINER'] as const;
const passedThrough = [
  'ORDERS_QUEUE_NAME',
  'COSMOS_ENDPOINT',
  'COSMOS_DATABASE',
  'COSMOS_ORDERS_CONTAINER',
  'QUEUE_MAX_DELIVERY_COUNT',
  'QUEUE_LOCK_DURATION_SECONDS',
  'QUEUE_MESSAGE_TTL_SECONDS',
  'DLQ_RESUBMIT_HORIZON_SECONDS',
  'INBOX_MARKER_TTL_SECONDS',
] as const;

/**
 * local.settings.json for running the app on a developer's machine against the provisioned
 * resources, signed in with `az login` / `azd auth login`: identity-based connections only (no key
 * is ever written), `IsEncrypted` a boolean and every value a string, as Core Tools expects.
 */
export function localSettingsFromAzd(env: AzdEnvironment): { IsEncrypted: false; Values: Record<string, string> } {
  const missing = required.filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`the azd environment lacks ${missing.join(', ')}: run "azd provision" first`);
  const values: Record<string, string> = {
    FUNCTIONS_WORKER_RUNTIME: 'node',
    AzureWebJobsStorage: 'UseDevelopmentStorage=true',
    ServiceBusConnection__fullyQualifiedNamespace: env.SERVICEBUS_FULLY_QUALIFIED_NAMESPACE ?? '',
  };
  for (const name of passedThrough) if (env[name] !== undefined) values[name] = String(env[name]);
  return { IsEncrypted: false, Values: values };
}
