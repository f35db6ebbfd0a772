import type { PluginConfig } from '@azure/cosmos';

/**
 * Adds up the `x-ms-request-charge` Cosmos DB reports for item requests (reads, creates, replaces,
 * batches, queries; failed ones too), through the SDK's request plugin: the store adapter returns
 * outcomes, not responses, so the charge is taken where every response passes. Metadata requests
 * (databases, containers, partition key ranges) are not the consumer's cost and are left out.
 */
export class RequestChargeRecorder {
  private total = 0;

  get requestUnits(): number {
    return this.total;
  }

  reset(): void {
    this.total = 0;
  }

  /** Give it to `new CosmosClient({ ..., plugins: [recorder.plugin] })`. */
  readonly plugin: PluginConfig = {
    on: 'request',
    plugin: async (context, _diagnosticNode, next) => {
      const isItem = context.resourceType === 'docs';
      try {
        const response = await next(context);
        if (isItem) this.add(response.headers);
        return response;
      } catch (error) {
        if (isItem) this.add((error as { headers?: Record<string, unknown> }).headers);
        throw error;
      }
    },
  };

  private add(headers: Readonly<Record<string, unknown>> | undefined): void {
    const charge = Number(headers?.['x-ms-request-charge'] ?? 0);
    if (Number.isFinite(charge)) this.total += charge;
  }
}
