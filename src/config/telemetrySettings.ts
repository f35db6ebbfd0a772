import { readElsewhere } from './settingKinds.js';

/** Telemetry's destination, read by the telemetry set-up (src/telemetry) before the app's settings. */
export const telemetrySettings = {
  APPLICATIONINSIGHTS_CONNECTION_STRING: readElsewhere({
    table: 'app',
    readBy: ['telemetry'],
    description:
      'Set: telemetry is exported to that Application Insights resource (the Bicep sets it). Unset: nothing is set up and nothing exported. `npm run local -- --telemetry` points it at a local ingestion stand-in.',
  }),
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: readElsewhere({
    table: 'app',
    readBy: ['telemetry'],
    description:
      '`ClientId=<client id>;Authorization=AAD`: the exporter authenticates with that managed identity (the Bicep sets it: the resource refuses instrumentation-key ingestion). Anything but `Authorization=AAD` stops start-up.',
  }),
};
