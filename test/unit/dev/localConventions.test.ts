import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { coreToolsSettings } from '../../../dev/local/coreToolsSettings.js';
import { deliveryLine } from '../../../dev/local/deliveryLine.js';
import { startLocalStack } from '../../../dev/local/localStack.js';
import { loadSettings } from '../../../src/config.js';

describe('npm start (tools/funcStart.cjs)', () => {
  it('says in one line that Core Tools is missing and points to the local stack', () => {
    const run = spawnSync(process.execPath, ['tools/funcStart.cjs'], { encoding: 'utf8', env: { PATH: '/nonexistent' } });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^Azure Functions Core Tools \(func\) is not installed: run `npm run local -- --serve`/),
    ]);
  });

  it('is what package.json runs, after a build', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe('npm run build --silent && node tools/funcStart.cjs');
    expect(scripts.dlq).not.toMatch(/build/);
  });
});

describe('the settings `npm run local -- --serve` prints', () => {
  const stackSettings = {
    ServiceBusConnection: 'Endpoint=sb://127.0.0.1:5672;SharedAccessKeyName=local;SharedAccessKey=local;UseDevelopmentEmulator=true',
    ORDERS_QUEUE_NAME: 'orders',
    COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    COSMOS_KEY: 'k',
    CosmosDbConnection: 'AccountEndpoint=https://127.0.0.1:8081/;AccountKey=k;',
    CARRIER_API_URL: 'http://127.0.0.1:7080',
    CARRIER_API_KEY: 'local-carrier-key',
    RETRY_STATE_SIGNING_KEY: 'r'.repeat(43),
  };

  it("are every setting of local.settings.sample.json, Core Tools' own included, and the app accepts them", () => {
    const printed = coreToolsSettings(stackSettings);
    const sample = (JSON.parse(readFileSync('local.settings.sample.json', 'utf8')) as { Values: Record<string, string> }).Values;
    expect(Object.keys(printed).sort()).toEqual(Object.keys(sample).sort());
    expect(printed).toMatchObject({
      FUNCTIONS_WORKER_RUNTIME: 'node',
      AzureWebJobsStorage: 'UseDevelopmentStorage=true',
      COSMOS_ENDPOINT: 'https://127.0.0.1:8081/',
    });
    expect(() => loadSettings(printed)).not.toThrow();
  });
});

describe('the local stack on a port that is taken', () => {
  it('names the component, the port and what to do', async () => {
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      await expect(startLocalStack({ wellKnownPorts: false, ports: { serviceBus: port } })).rejects.toThrow(
        new RegExp(`^the Service Bus emulator cannot listen on port ${port}: it is in use .*run \`npm run local\`, which uses free ports\\.$`),
      );
      await expect(startLocalStack({ wellKnownPorts: false, ports: { cosmos: port } })).rejects.toThrow(
        new RegExp(`^the Cosmos DB stand-in cannot listen on port ${port}: it is in use`),
      );
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});

describe('the one line per delivery that --serve prints', () => {
  const delivery = { body: '{}', messageId: 'm-1', deliveryCount: 3, sequenceNumber: 7 };
  const logged = (fields: Record<string, unknown>) => ({
    invocationId: 'i',
    logs: [{ level: 'information' as const, message: JSON.stringify({ event: 'order-message', ...fields }) }],
  });

  it('says function, MessageId, delivery and outcome', () => {
    expect(deliveryLine('processOrder', delivery, logged({ outcome: 'duplicate' }))).toBe('processOrder  m-1  delivery 3  duplicate');
  });

  it('adds a shortened reason, and that a throw hands the message back', () => {
    const line = deliveryLine('processOrder', delivery, {
      ...logged({ outcome: 'conflict', reason: `PayloadConflict: ${'x'.repeat(200)}` }),
      error: new Error('thrown'),
    });
    expect(line).toMatch(/^processOrder {2}m-1 {2}delivery 3 {2}conflict \(PayloadConflict: x+…\) -> handed back to Service Bus$/);
    expect(line.length).toBeLessThan(160);
  });
});
