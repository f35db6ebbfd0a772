import { readElsewhere } from './settingKinds.js';

/** The Functions host's own settings: the app never reads them, the reference and the local sample list them. */
export const hostSettings = {
  FUNCTIONS_WORKER_RUNTIME: readElsewhere({
    table: 'host',
    readBy: ['host'],
    defaultText: '— (required by Core Tools)',
    localValue: 'node',
    description: '`node`.',
  }),
  AzureWebJobsStorage: readElsewhere({
    table: 'host',
    readBy: ['host'],
    secret: true,
    defaultText: '— (required by Core Tools)',
    localValue: 'UseDevelopmentStorage=true',
    description:
      "The host's storage. `UseDevelopmentStorage=true` means Azurite on this machine (127.0.0.1:10000-10002), which `npm start` starts when nothing listens there; in Azure the template sets `AzureWebJobsStorage__accountName` and `__credential=managedidentity` instead.",
  }),
  FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: readElsewhere({
    table: 'host',
    readBy: ['host'],
    unit: 'bytes',
    defaultText: "`104857600` (100 MiB, the host's own)",
    localValue: '1048576',
    description:
      "The largest request body the host passes to a function; a larger one is refused before the function runs (Kestrel's 413; azure-functions-host#10519 reports a 500 for it), chunked or not. The host buffers a body whole before the worker sees it, so this, not `INTAKE_MAX_BODY_BYTES`, bounds the memory one request can take. Recommended: `1048576` (1 MiB), comfortably above `INTAKE_MAX_BODY_BYTES` so that the intake still answers an order just over its own limit with its problem+json 413. The local host applies it too.",
  }),
};
