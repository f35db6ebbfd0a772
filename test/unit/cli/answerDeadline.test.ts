import { describe, expect, it } from 'vitest';
import { answerDeadline, NoAnswerError } from '../../../src/cli/answerDeadline.js';

describe('answerDeadline', () => {
  it('gives a source up once a call outlasts the timeout, and then asks it nothing more', async () => {
    let wake = () => undefined as void;
    const deadline = answerDeadline(10_000, () => new Promise<void>((r) => (wake = r)));
    let fail = (_e: Error) => undefined as void;
    const running = deadline.within('Cosmos DB', () => new Promise((_ok, no) => (fail = no)));
    wake();
    await expect(running).rejects.toEqual(new NoAnswerError('Cosmos DB', 10_000));
    expect(deadline.silent()).toEqual(['Cosmos DB']);
    // The abandoned call fails later (the SDK gave up too): nobody waits for it, and nothing is left unhandled.
    fail(new Error('ServiceUnavailable'));
    await new Promise((r) => setImmediate(r));
    let asked = false;
    await expect(deadline.within('Cosmos DB', async () => (asked = true))).rejects.toThrow('no answer from Cosmos DB within 10s');
    expect(asked).toBe(false);
  });

  it('passes an answer or an error given in time through unchanged', async () => {
    const deadline = answerDeadline(10_000, () => new Promise<void>(() => undefined));
    await expect(deadline.within('Service Bus', async () => 7)).resolves.toBe(7);
    await expect(deadline.within('Service Bus', async () => Promise.reject(new Error('MessagingEntityNotFound')))).rejects.toThrow('MessagingEntityNotFound');
    expect(deadline.silent()).toEqual([]);
  });
});
