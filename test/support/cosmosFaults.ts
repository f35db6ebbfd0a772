import { request } from 'node:https';
import { inject } from 'vitest';
import { faultControlPath } from '../../emulators/cosmos-emulator/cosmosStandIn.js';
import type { FaultRule } from '../../emulators/cosmos-emulator/cosmosStandIn.js';

/** Asks this run's Cosmos stand-in to fail matching requests, as a throttled or failing account would. */
export function injectCosmosFault(rule: FaultRule): Promise<void> {
  return control('POST', JSON.stringify(rule));
}

export function clearCosmosFaults(): Promise<void> {
  return control('DELETE');
}

function control(method: string, body?: string): Promise<void> {
  const url = new URL(faultControlPath, inject('cosmosEndpoint'));
  return new Promise((resolve, reject) => {
    const req = request(url, { method, rejectUnauthorized: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 204 ? resolve() : reject(new Error(`fault control answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}
