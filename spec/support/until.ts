/**
 * Waits, in real time, until `condition` holds: for end-to-end specs whose effects arrive over
 * HTTP. Polls every 10 ms; rejects after `timeoutMs`.
 */
export async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`a condition did not hold within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
