import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobServiceClient } from '@azure/storage-blob';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureAzurite, hostStorageSetting, wantsDevelopmentStorage, wellKnownPorts } from '../../tools/azurite.cjs';
import type { AzuriteHandle } from '../../tools/azurite.cjs';

/** What local.settings.sample.json gives the Functions host as its storage. */
const sampleStorage = (JSON.parse(readFileSync('local.settings.sample.json', 'utf8')) as { Values: Record<string, string> }).Values.AzureWebJobsStorage ?? '';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('Azurite for the Functions host (tools/azurite.cjs, as npm start and npm run local -- --serve --azurite use it)', () => {
  const handles: AzuriteHandle[] = [];
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.stop()));
  });

  it('is wanted for UseDevelopmentStorage=true (the sample settings), in any case and with a trailing semicolon, and only then', () => {
    expect(sampleStorage).toBe('UseDevelopmentStorage=true');
    expect([sampleStorage, 'usedevelopmentstorage=true;', ' UseDevelopmentStorage=true '].map(wantsDevelopmentStorage)).toEqual([true, true, true]);
    expect(['', undefined, 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k', 'UseDevelopmentStorage=false'].map(wantsDevelopmentStorage)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('reads the host storage setting as Core Tools does: the environment first, then local.settings.json', () => {
    const appRoot = mkdtempSync(join(tmpdir(), 'func-app-'));
    expect(hostStorageSetting(appRoot, {})).toBeUndefined();
    writeFileSync(join(appRoot, 'local.settings.json'), JSON.stringify({ Values: { AzureWebJobsStorage: 'UseDevelopmentStorage=true' } }));
    expect(hostStorageSetting(appRoot, {})).toBe('UseDevelopmentStorage=true');
    expect(hostStorageSetting(appRoot, { AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=a' })).toBe(
      'DefaultEndpointsProtocol=https;AccountName=a',
    );
    writeFileSync(join(appRoot, 'local.settings.json'), '{ not json');
    expect(() => hostStorageSetting(appRoot, {})).toThrow(/local\.settings\.json is not valid JSON/);
  });

  it('starts nothing when the host storage is a real account', async () => {
    const ports = { blob: await freePort(), queue: await freePort(), table: await freePort() };
    const handle = await ensureAzurite({
      storage: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k',
      location: mkdtempSync(join(tmpdir(), 'azurite-')),
      ports,
    });
    expect(handle.state).toBe('not-needed');
    expect(await accepts(ports.blob)).toBe(false);
  });

  it('refuses, naming the port, when something else holds one of the emulator ports', async () => {
    const squatter = createServer();
    const queue = await listen(squatter);
    try {
      const ports = { blob: await freePort(), queue, table: await freePort() };
      await expect(ensureAzurite({ storage: sampleStorage, location: mkdtempSync(join(tmpdir(), 'azurite-')), ports })).rejects.toThrow(
        `${queue} (queue) is taken by something else`,
      );
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("starts Azurite on the well-known ports, which the Storage SDK reaches with the sample settings' UseDevelopmentStorage=true; a second start reuses it; stop frees the ports", async () => {
    const location = mkdtempSync(join(tmpdir(), 'azurite-'));
    const lines: string[] = [];
    const handle = await ensureAzurite({ storage: sampleStorage, location, log: (line) => lines.push(line) });
    handles.push(handle);
    expect(handle.state).toBe('started');
    expect(lines).toEqual([`Azurite (host storage emulator) on 127.0.0.1:10000-10002, data in ${location}`]);

    const blobs = BlobServiceClient.fromConnectionString(sampleStorage);
    const container = blobs.getContainerClient('azure-webjobs-hosts');
    await container.createIfNotExists();
    await container.getBlockBlobClient('locks/probe').upload('held', 4);
    expect((await container.getBlockBlobClient('locks/probe').downloadToBuffer()).toString()).toBe('held');

    expect((await ensureAzurite({ storage: sampleStorage, location })).state).toBe('already-running');

    await handle.stop();
    expect(await Promise.all(Object.values(wellKnownPorts).map(accepts))).toEqual([false, false, false]);
  }, 60_000);
});
