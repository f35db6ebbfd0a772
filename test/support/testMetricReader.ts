import { MetricReader } from '@opentelemetry/sdk-metrics';

/** A reader the tests collect from on demand: what the app's meters recorded, without an exporter. */
export class TestMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
