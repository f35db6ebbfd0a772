import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCosmosStandIn } from '../cosmosStandIn.js';
import { createCosmosClient } from '../../../src/cosmos/index.js';
import { commandAvailable } from '../../../test/support/commands.js';

/** A throwaway CA and a server certificate it signs for "localhost", as an exported emulator certificate would be. */
function certificates(dir: string, name: string) {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name} test CA`, '-keyout', `${name}-ca.key`, '-out', `${name}-ca.pem`);
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', `${name}.key`, '-out', `${name}.csr`);
  execFileSync('bash', ['-c', `printf 'subjectAltName=DNS:localhost' > ${name}.ext`], { cwd: dir });
  run(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${name}-ca.pem`,
    '-CAkey',
    `${name}-ca.key`,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  );
  return { ca: join(dir, `${name}-ca.pem`), cert: readFileSync(join(dir, `${name}.pem`)), key: readFileSync(join(dir, `${name}.key`)) };
}

const suites = commandAvailable('openssl', 'version') ? [{ tool: 'openssl' }] : [];
if (suites.length === 0) console.log('COSMOS_CA_CERT_PATH test: skipped because openssl is not installed');

describe.runIf(suites.length > 0)('COSMOS_CA_CERT_PATH (certificates made with openssl)', () => {
  it('verifies the endpoint against the given CA: trusted when it signed the certificate, refused when not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cosmos-ca-'));
    const server = certificates(dir, 'server');
    const stranger = certificates(dir, 'stranger');
    const standIn = await startCosmosStandIn({ port: 0, tls: { cert: server.cert, key: server.key } });
    const endpoint = standIn.endpoint.replace('127.0.0.1', 'localhost');
    try {
      const trusted = createCosmosClient({ endpoint, key: standIn.key, caCertificatePath: server.ca });
      expect((await trusted.getDatabaseAccount()).resource).toBeDefined();
      trusted.dispose();

      const untrusted = createCosmosClient({ endpoint, key: standIn.key, caCertificatePath: stranger.ca });
      const error = await untrusted.getDatabaseAccount().catch((e: unknown) => e);
      expect(String((error as { code?: string; message?: string }).code ?? (error as Error).message)).toMatch(/CERT|SIGNATURE|UNABLE_TO_VERIFY|SELF_SIGNED/);
      untrusted.dispose();
    } finally {
      await standIn.close();
    }
  }, 60_000);
});
