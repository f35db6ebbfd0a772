export { idempotencyKeyHeader, idempotencyKeyValue, parseIdempotencyKey } from './idempotencyKeyHeader.js';
export { isLoopbackHostname, isSecureOrLoopback, secureOrLoopbackRule } from './loopbackAddress.js';
export { readBoundedBody } from './readBoundedBody.js';
export type { BoundedBody } from './readBoundedBody.js';
export { maxIdempotencyKeyLength, readIdempotencyKey } from './readIdempotencyKey.js';
export type { IdempotencyKeyReading } from './readIdempotencyKey.js';
