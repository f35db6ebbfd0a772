import { describe, expect, it } from 'vitest';
import { loadSetupSettings } from '../../../src/config.js';
import { checkDatabase, checkLeasesContainer, checkOrdersContainer, isPathIndexed, requiredIndexedPaths } from '../../../src/doctor/index.js';
import type { FoundContainer } from '../../../src/doctor/index.js';

const settings = loadSetupSettings({ ORDERS_QUEUE_NAME: 'orders' });
const rightContainer: FoundContainer = {
  partitionKey: { paths: ['/orderId'] },
  defaultTtl: -1,
  indexingPolicy: {
    indexingMode: 'consistent',
    includedPaths: requiredIndexedPaths.map((path) => ({ path })),
    excludedPaths: [{ path: '/*' }, { path: '/"_etag"/?' }],
  },
};

describe('checkOrdersContainer', () => {
  it('passes the container the template creates', () => {
    expect(checkOrdersContainer(settings, rightContainer).filter((r) => r.status !== 'ok')).toEqual([]);
  });

  it('names a missing container', () => {
    expect(checkOrdersContainer(settings, undefined)).toMatchObject([{ status: 'MISSING', subject: "container 'orders'" }]);
  });

  it('says a partition key other than /orderId cannot be changed', () => {
    const [wrong] = checkOrdersContainer(settings, { ...rightContainer, partitionKey: { paths: ['/id'] } }).filter((r) => r.status !== 'ok');
    expect(wrong).toMatchObject({ property: 'partition key', expected: '/orderId', found: '/id' });
    expect(wrong?.fix).toContain('fixed when the container is created');
  });

  it('says TTL off leaves markers forever, and a default TTL expires orders', () => {
    const off = checkOrdersContainer(settings, { ...rightContainer, defaultTtl: undefined }).filter((r) => r.status !== 'ok');
    expect(off).toMatchObject([{ property: 'default time-to-live', found: "off (no defaultTtl: documents' own ttl is ignored, so markers never expire)" }]);
    const expiring = checkOrdersContainer(settings, { ...rightContainer, defaultTtl: 3600 }).filter((r) => r.status !== 'ok');
    expect(expiring).toMatchObject([{ property: 'default time-to-live', found: '3600 (every document expires after 3600 s, orders included)' }]);
  });

  it('names each path the queries need that the policy leaves out', () => {
    const policy = { includedPaths: [{ path: '/*' }], excludedPaths: [{ path: '/state/?' }, { path: '/leaseExpiresAt/?' }] };
    expect(checkOrdersContainer(settings, { ...rightContainer, indexingPolicy: policy }).filter((r) => r.status !== 'ok')).toMatchObject([
      { property: 'indexed paths', found: 'not indexed: /state/? /leaseExpiresAt/?' },
    ]);
  });
});

describe('checkLeasesContainer and checkDatabase', () => {
  it('wants /id as the leases partition key, and names a missing container or database', () => {
    expect(checkLeasesContainer(settings, { partitionKey: { paths: ['/id'] } })).toMatchObject([{ status: 'ok' }]);
    expect(checkLeasesContainer(settings, { partitionKey: { paths: ['/orderId'] } })).toMatchObject([{ status: 'WRONG', expected: '/id', found: '/orderId' }]);
    expect(checkLeasesContainer(settings, undefined)).toMatchObject([{ status: 'MISSING', subject: "container 'leases'" }]);
    expect(checkDatabase(settings, false)).toMatchObject([{ status: 'MISSING', subject: "database 'orders'" }]);
  });
});

describe('isPathIndexed', () => {
  it('indexes everything without a policy or without included paths', () => {
    expect(isPathIndexed(undefined, '/state/?')).toBe(true);
    expect(isPathIndexed({ excludedPaths: [{ path: '/"_etag"/?' }] }, '/state/?')).toBe(true);
  });

  it('lets the more precise path decide', () => {
    expect(isPathIndexed({ includedPaths: [{ path: '/state/?' }], excludedPaths: [{ path: '/*' }] }, '/state/?')).toBe(true);
    expect(isPathIndexed({ includedPaths: [{ path: '/*' }], excludedPaths: [{ path: '/state/*' }] }, '/state/?')).toBe(false);
    expect(isPathIndexed({ includedPaths: [{ path: '/state/*' }], excludedPaths: [{ path: '/*' }] }, '/state/?')).toBe(true);
    expect(isPathIndexed({ includedPaths: [{ path: '/docType/?' }], excludedPaths: [{ path: '/*' }] }, '/state/?')).toBe(false);
  });

  it('indexes nothing when indexing is off', () => {
    expect(isPathIndexed({ indexingMode: 'none', includedPaths: [{ path: '/*' }] }, '/state/?')).toBe(false);
  });
});
