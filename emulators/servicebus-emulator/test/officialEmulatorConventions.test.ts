import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceBusClient } from '@azure/service-bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isoDurationMs, loadOfficialEmulatorConfig, startServiceBusEmulator } from '../index.js';
import type { ServiceBusEmulator } from '../index.js';

// Microsoft's emulator is configured by a Config.json and answers GET /health on port 5300; its
// samples wait for that and expect the entities of that file. The same two conventions here.
const dir = mkdtempSync(join(tmpdir(), 'sb-config-'));
const configPath = (name: string, config: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config));
  return path;
};
const sample = {
  UserConfig: {
    Namespaces: [
      {
        Name: 'sbemulatorns',
        Queues: [
          {
            Name: 'work.items',
            Properties: {
              LockDuration: 'PT30S',
              MaxDeliveryCount: 4,
              DefaultMessageTimeToLive: 'PT1H',
              RequiresDuplicateDetection: true,
              DuplicateDetectionHistoryTimeWindow: 'PT20S',
              DeadLetteringOnMessageExpiration: true,
              RequiresSession: false,
              ForwardTo: '',
            },
          },
        ],
        Topics: [
          {
            Name: 'news',
            Properties: { DefaultMessageTimeToLive: 'PT1H', RequiresDuplicateDetection: false },
            Subscriptions: [
              { Name: 'everything' },
              {
                Name: 'sports',
                Rules: [{ Name: 'by-property', Properties: { FilterType: 'Correlation', CorrelationFilter: { Properties: { section: 'sports' } } } }],
              },
              { Name: 'urgent', Rules: [{ Name: 'sql', Properties: { FilterType: 'Sql', SqlFilter: { SqlExpression: 'priority > 5' } } }] },
            ],
          },
        ],
      },
    ],
    Logging: { Type: 'File' },
  },
};

describe("Microsoft's Service Bus emulator's Config.json", () => {
  it("becomes queues and topics with the durations, limits and rules it gives (and Azure's defaults for what it leaves out)", () => {
    const { queues, topics } = loadOfficialEmulatorConfig(configPath('Config.json', sample));
    expect(queues['work.items']).toEqual({
      lockDurationMs: 30_000,
      maxDeliveryCount: 4,
      defaultMessageTimeToLiveMs: 3_600_000,
      duplicateDetectionWindowMs: 20_000,
      deadLetteringOnMessageExpiration: true,
    });
    expect(topics.news?.subscriptions.everything?.settings).toMatchObject({
      lockDurationMs: 60_000,
      maxDeliveryCount: 10,
      defaultMessageTimeToLiveMs: 3_600_000,
    });
    expect(topics.news?.subscriptions.everything?.rules.map((r) => r.name)).toEqual(['$Default']);
    expect(topics.news?.subscriptions.sports?.rules).toEqual([
      { name: 'by-property', filter: { kind: 'correlation', fields: expect.objectContaining({ applicationProperties: { section: 'sports' } }) } },
    ]);
  });

  it('refuses what this emulator cannot do, by name, rather than ignoring it', () => {
    const withSessions = structuredClone(sample);
    (withSessions.UserConfig.Namespaces[0]!.Queues[0]!.Properties as Record<string, unknown>).RequiresSession = true;
    expect(() => loadOfficialEmulatorConfig(configPath('sessions.json', withSessions))).toThrow(
      /UserConfig\.Namespaces\.0\.Queues\.0\.Properties\.RequiresSession: sessions are not supported by this emulator yet/,
    );
    const forwarding = structuredClone(sample);
    forwarding.UserConfig.Namespaces[0]!.Queues[0]!.Properties.ForwardTo = 'elsewhere';
    expect(() => loadOfficialEmulatorConfig(configPath('forward.json', forwarding))).toThrow(/ForwardTo: auto-forwarding is not supported by this emulator/);
    expect(() =>
      loadOfficialEmulatorConfig(
        configPath('bad.json', { UserConfig: { Namespaces: [{ Name: 'x', Queues: [{ Name: 'q', Properties: { LockDuration: '30s' } }] }] } }),
      ),
    ).toThrow(/LockDuration: must be an ISO 8601 duration such as PT1M/);
  });

  it('reads ISO 8601 durations as Azure writes them', () => {
    expect([isoDurationMs('PT1M'), isoDurationMs('PT20S'), isoDurationMs('P14D'), isoDurationMs('P1DT2H3M4.5S')]).toEqual([
      60_000, 20_000, 1_209_600_000, 93_784_500,
    ]);
  });
});

describe('an emulator started from a Config.json, with the health endpoint', () => {
  let emulator: ServiceBusEmulator;
  let client: ServiceBusClient;
  beforeAll(async () => {
    emulator = await startServiceBusEmulator({ port: 0, healthPort: 0, ...loadOfficialEmulatorConfig(configPath('Config.json', sample)) });
    client = new ServiceBusClient(emulator.connectionString);
  });
  afterAll(async () => {
    await client.close();
    await emulator.close();
  });

  it('answers GET /health with 200 once it takes connections, and 404 elsewhere', async () => {
    const health = await fetch(`http://127.0.0.1:${emulator.healthPort ?? 0}/health`);
    expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { status: 'healthy' } });
    expect((await fetch(`http://127.0.0.1:${emulator.healthPort ?? 0}/nope`)).status).toBe(404);
  });

  it("serves the file's queue and routes the topic's messages by its rules", async () => {
    const queueSender = client.createSender('work.items');
    await queueSender.sendMessages({ messageId: 'w-1', body: 'work' });
    const [work] = await client.createReceiver('work.items', { receiveMode: 'receiveAndDelete' }).receiveMessages(1, { maxWaitTimeInMs: 3000 });
    expect(work?.messageId).toBe('w-1');
    const sender = client.createSender('news');
    await sender.sendMessages([
      { messageId: 'n-1', body: {}, applicationProperties: { section: 'sports', priority: 9 } },
      { messageId: 'n-2', body: {}, applicationProperties: { section: 'politics', priority: 1 } },
    ]);
    const ids = async (sub: string) =>
      (await client.createReceiver('news', sub, { receiveMode: 'receiveAndDelete' }).receiveMessages(10, { maxWaitTimeInMs: 1000 }))
        .map((m) => String(m.messageId))
        .sort();
    expect(await ids('everything')).toEqual(['n-1', 'n-2']);
    expect(await ids('sports')).toEqual(['n-1']);
    expect(await ids('urgent')).toEqual(['n-1']);
  });
});
