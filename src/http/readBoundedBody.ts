/** A request body read with a bound: the bytes, or the finding that there are more than the bound allows. */
export type BoundedBody = { readonly kind: 'body'; readonly bytes: Uint8Array } | { readonly kind: 'too-large' };

/**
 * Reads at most `maxBytes` (and the chunk that crosses it), then cancels the stream: a chunked
 * body declares no length, and a declared Content-Length is the sender's word, so the bytes are
 * counted as they come and the sender is stopped, never buffered whole. No body is an empty one.
 */
export async function readBoundedBody(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<BoundedBody> {
  if (body === null) return { kind: 'body', bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    length += next.value.byteLength;
    if (length > maxBytes) {
      await reader.cancel('the body is over its limit').catch(() => undefined);
      return { kind: 'too-large' };
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(length);
  chunks.reduce((offset, chunk) => (bytes.set(chunk, offset), offset + chunk.byteLength), 0);
  return { kind: 'body', bytes };
}
