/** Polls until the condition holds; fails naming what it waited for. One loop for the demos and the tests. */
export async function waitUntil(what: string, condition: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
