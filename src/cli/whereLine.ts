import { entityPath } from './deadLetterQueue.js';
import type { EntityAddress } from './deadLetterQueue.js';
import { endpointHostOf } from './serviceBusConnection.js';
import { escapeControls } from './terminalText.js';

export interface Whereabouts {
  readonly namespace?: string;
  readonly connectionString?: string;
  readonly address: EntityAddress;
  /** For the commands that read several entities (groups, trace): all of them, named instead of `address`. */
  readonly entities?: readonly EntityAddress[];
  readonly cosmosEndpoint?: string;
  readonly cosmosDatabase: string;
  readonly cosmosContainer: string;
  readonly consumerName?: string;
}

/**
 * The first line of every run (on stderr, so `--json` output stays clean): which namespace, entity
 * and Cosmos DB account the commands act on, before they act. A connection string shows its
 * endpoint only, never its key.
 */
export function whereLine(where: Whereabouts): string {
  const endpoint = endpointHostOf(where.connectionString);
  const namespace = where.namespace ?? (endpoint ? `${endpoint} (connection string)` : '(no namespace given)');
  const cosmos = where.cosmosEndpoint ? `Cosmos DB ${where.cosmosEndpoint} ${where.cosmosDatabase}/${where.cosmosContainer}` : 'no Cosmos DB';
  const consumer = where.consumerName ? `, consumer ${where.consumerName}` : '';
  const entity = where.entities ? where.entities.map(entityPath).join(' + ') : entityPath(where.address);
  return escapeControls(`orders-ops: Service Bus ${namespace} ${entity}, ${cosmos}${consumer}`);
}
