import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAppSettings, readHostJson, requestBodySizeLimitBytes, resolveBindingExpression, timeSpanToMs } from '../hostSettings.js';
import { filesMatching } from '../loadFunctionApp.js';

function appDir(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'app-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe('local host settings', () => {
  it('reads .NET TimeSpans as host.json writes them', () => {
    expect(timeSpanToMs('00:05:00')).toBe(300_000);
    expect(timeSpanToMs('1.02:00:30.5')).toBe(((24 + 2) * 3600 + 30) * 1000 + 500);
    expect(() => timeSpanToMs('5 minutes')).toThrow(/not a TimeSpan/);
  });

  it('honours host.json and falls back to the host defaults', () => {
    const root = appDir({ 'host.json': JSON.stringify({ extensions: { serviceBus: { maxConcurrentCalls: 4, maxAutoLockRenewalDuration: '00:01:00' } } }) });
    expect(readHostJson(root)).toEqual({ maxConcurrentCalls: 4, maxAutoLockRenewalDurationMs: 60_000, autoCompleteMessages: true });
    expect(readHostJson(appDir({}))).toEqual({ maxConcurrentCalls: 16, maxAutoLockRenewalDurationMs: 300_000, autoCompleteMessages: true });
  });

  it('takes local.settings.json values, with the environment winning', () => {
    const root = appDir({ 'local.settings.json': JSON.stringify({ Values: { A: 'file', B: 'file', N: 3 } }) });
    expect(readAppSettings(root, { B: 'env' })).toEqual({ A: 'file', B: 'env', N: '3' });
  });

  it('resolves %SETTING% binding expressions and names a missing one', () => {
    expect(resolveBindingExpression('%ORDERS_QUEUE_NAME%', { ORDERS_QUEUE_NAME: 'orders' })).toBe('orders');
    expect(() => resolveBindingExpression('%MISSING%', {})).toThrow('%MISSING% names an app setting that is not set');
  });

  it('finds the compiled functions that package.json main globs, and nothing else', () => {
    const root = appDir({
      'dist/functions/a.js': '',
      'dist/functions/b.js': '',
      'dist/functions/a.js.map': '',
      'dist/src/c.js': '',
      'dist/functions/sub/d.js': '',
    });
    expect(filesMatching(root, 'dist/functions/*.js').map((f) => f.slice(root.length + 1))).toEqual(['dist/functions/a.js', 'dist/functions/b.js']);
    expect(filesMatching(root, 'dist/**/*.js').length).toBe(5 - 1);
  });

  it('reads the request body limit as the Functions host does: FUNCTIONS_REQUEST_BODY_SIZE_LIMIT in bytes when it is a whole number, else 100 MiB', () => {
    expect(requestBodySizeLimitBytes({})).toBe(104_857_600);
    expect(requestBodySizeLimitBytes({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: '1048576' })).toBe(1_048_576);
    expect(requestBodySizeLimitBytes({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: ' 2048 ' })).toBe(2048);
    expect(requestBodySizeLimitBytes({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: '0' })).toBe(0);
    for (const ignored of ['', 'abc', '1.5', '1e6', '-1', '99999999999999999999']) {
      expect(requestBodySizeLimitBytes({ FUNCTIONS_REQUEST_BODY_SIZE_LIMIT: ignored }), ignored).toBe(104_857_600);
    }
  });
});
