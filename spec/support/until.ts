/**
 * Waits, in real time, until `condition` holds: for end-to-end specs whose effects arrive over
 * HTTP. Polls every 10 ms; rejects after `timeoutMs` quoting the condition.
 *
 * @deprecated Use `eventually(() => expect(...)...)` from ./eventually: its failure names the
 * matcher, the expected and the received value, not only the condition that did not hold.
 */
export async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`a condition did not hold within ${timeoutMs} ms: ${String(condition)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
