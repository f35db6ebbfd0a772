import { Option } from 'commander';
import type { Command } from 'commander';
import { settingDefaults } from '../config.js';
import { durationOption } from './durationOption.js';

/** The options every command shares: where Service Bus and Cosmos DB are, and how long to wait for them. */
export interface GlobalOptions {
  connectionString?: string;
  namespace?: string;
  queue?: string;
  topic?: string;
  subscription?: string;
  cosmosEndpoint?: string;
  cosmosKey?: string;
  cosmosDatabase: string;
  cosmosContainer: string;
  consumerName?: string;
  duplicateWindow: number;
  timeout: number;
}

/** Declares the global options, their defaults taken from the environment the tool runs in. */
export function withGlobalOptions(program: Command, env: Readonly<Record<string, string | undefined>>): Command {
  return program
    .addOption(
      new Option('--connection-string <cs>', 'Service Bus connection string (emulator, local)').default(
        env.SERVICEBUS_CONNECTION_STRING,
        'SERVICEBUS_CONNECTION_STRING',
      ),
    )
    .addOption(
      new Option(
        '--namespace <fqdn>',
        'namespace, e.g. sb-x.servicebus.windows.net, with DefaultAzureCredential (production); without it and without a connection string, SERVICEBUS_FULLY_QUALIFIED_NAMESPACE (azd env get-values)',
      ),
    )
    .addOption(new Option('--queue <name>', 'the queue whose dead letters to handle').default(env.ORDERS_QUEUE_NAME ?? 'orders'))
    .option('--topic <name>', 'a topic, with --subscription, instead of a queue')
    .option('--subscription <name>', 'the topic subscription')
    .addOption(new Option('--cosmos-endpoint <url>', 'Cosmos DB account, to show what the store knows of each message').default(env.COSMOS_ENDPOINT))
    .addOption(new Option('--cosmos-key <key>', 'Cosmos DB key; without it, DefaultAzureCredential').default(env.COSMOS_KEY, 'COSMOS_KEY'))
    .option('--cosmos-database <name>', 'database', env.COSMOS_DATABASE ?? settingDefaults.COSMOS_DATABASE)
    .option('--cosmos-container <name>', 'orders container', env.COSMOS_ORDERS_CONTAINER ?? settingDefaults.COSMOS_ORDERS_CONTAINER)
    .option(
      '--consumer-name <name>',
      "the consumer's CONSUMER_NAME; with --subscription the subscription's name (the fulfilment consumer's), else CONSUMER_NAME",
    )
    .addOption(
      new Option('--duplicate-window <duration>', "the queue's duplicate-detection window (0s if it has none)")
        .argParser(durationOption)
        .default(600_000, '10m'),
    )
    .addOption(
      new Option('--timeout <duration>', 'how long to wait for Service Bus or Cosmos DB to answer before giving up with the reason')
        .argParser(durationOption)
        .default(10_000, '10s'),
    );
}
