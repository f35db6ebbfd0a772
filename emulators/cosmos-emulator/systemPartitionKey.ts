import Items from '@vercel/cosmosdb-server/lib/account/items';

interface ItemsInternals {
  _partitionKeyPath: string[];
  _getPartitionKeyPath(): string[];
}

/**
 * A container created without a partition key gets `/_partitionKey` from the SDK, and Cosmos DB
 * keeps its items by that property like any other path (`{ _partitionKey: "a" }` is read with the
 * partition key "a"; an item without it is in the undefined partition). The library filed every
 * item of such a container by its id, so a read or replace naming the partition key found nothing.
 * Applied once, to the library's class, before any container exists.
 */
export function keepSystemPartitionKeyAsWritten(): void {
  const prototype = (Items as unknown as { prototype: ItemsInternals }).prototype;
  prototype._getPartitionKeyPath = function partitionKeyPath(this: ItemsInternals): string[] {
    const [first] = this._partitionKeyPath;
    return first ? first.slice(1).split('/') : ['id'];
  };
}
