import { z } from 'zod';

// The fields of the Functions and azd configuration files that this project relies on, as our own
// schemas: the published ones are outside reference material (test/infra/publishedSchemas.test.ts).

const timeSpan = z.string().regex(/^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/, 'a TimeSpan such as 00:05:00');

export const hostJsonSchema = z.object({
  version: z.literal('2.0'),
  // The host exports through OpenTelemetry (the worker's distro does too): one operation per order.
  telemetryMode: z.literal('OpenTelemetry'),
  // In that mode the host builds no Application Insights SDK, so logging.applicationInsights (samplingSettings
  // above all) would be read by nothing while it seems to say what is sampled; sampling is OTEL_TRACES_SAMPLER's.
  logging: z
    .object({
      applicationInsights: z
        .never({ error: 'is not read with telemetryMode OpenTelemetry: sampling is set by OTEL_TRACES_SAMPLER (docs/operations.md)' })
        .optional(),
    })
    .optional(),
  extensionBundle: z.object({ id: z.literal('Microsoft.Azure.Functions.ExtensionBundle'), version: z.string().regex(/^\[4\.\*, 5\.0\.0\)$/) }),
  extensions: z.object({
    serviceBus: z.object({
      maxConcurrentCalls: z.number().int().positive(),
      maxAutoLockRenewalDuration: timeSpan,
      // The function settles by returning or throwing: with auto-complete off nothing would complete.
      autoCompleteMessages: z.literal(true),
    }),
  }),
});

export const localSettingsSchema = z.object({
  IsEncrypted: z.literal(false),
  Values: z
    .record(z.string(), z.string())
    .refine((v) => v.FUNCTIONS_WORKER_RUNTIME === 'node', 'FUNCTIONS_WORKER_RUNTIME must be "node"')
    .refine(
      (v) => typeof v.AzureWebJobsStorage === 'string' || typeof v.AzureWebJobsStorage__accountName === 'string',
      'AzureWebJobsStorage (or __accountName) is required by Core Tools',
    ),
});

const hook = z.object({ shell: z.enum(['sh', 'pwsh']), run: z.string().min(1), interactive: z.boolean(), continueOnError: z.boolean() });

export const azureYamlSchema = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  metadata: z.object({ template: z.string() }),
  services: z.object({ api: z.object({ project: z.literal('.'), language: z.literal('ts'), host: z.literal('function'), remoteBuild: z.literal(true) }) }),
  hooks: z.object({ preprovision: z.object({ posix: hook, windows: hook }), postprovision: z.object({ posix: hook, windows: hook }) }),
});
