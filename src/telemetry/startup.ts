// Imported first by every file in functions/: telemetry must be running before the SDKs and
// @azure/functions load (the instrumentations patch them as they are required) and before any
// composition root asks for a meter (a meter taken earlier would stay a no-op).
import { startAzureMonitor } from './azureMonitor.js';

startAzureMonitor();
