import { describe, expect, it } from 'vitest';
import { readBoundedBody } from '../../../src/http/readBoundedBody.js';

/** A body in the given chunks; records why the reader stopped the sender, if it did. */
function streamOf(chunks: readonly Uint8Array[]) {
  const seen: { cancelReason?: unknown } = {};
  let next = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const chunk = chunks[next];
        next += 1;
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      cancel(reason) {
        seen.cancelReason = reason;
      },
    },
    { highWaterMark: 0 },
  );
  return { body, seen };
}

describe('readBoundedBody', () => {
  it('reads no body as an empty one', async () => {
    expect(await readBoundedBody(null, 16)).toEqual({ kind: 'body', bytes: new Uint8Array(0) });
  });

  it('gives the bytes of a body within the bound, joined from its chunks', async () => {
    const { body, seen } = streamOf([Uint8Array.of(1, 2), Uint8Array.of(3)]);
    expect(await readBoundedBody(body, 3)).toEqual({ kind: 'body', bytes: Uint8Array.of(1, 2, 3) });
    expect(seen).not.toHaveProperty('cancelReason');
  });

  it('stops the sender of a body over the bound, telling the stream why', async () => {
    const { body, seen } = streamOf([Uint8Array.of(1, 2), Uint8Array.of(3, 4)]);
    expect(await readBoundedBody(body, 3)).toEqual({ kind: 'too-large' });
    expect(seen.cancelReason).toBe('the body is over its limit');
  });
});
