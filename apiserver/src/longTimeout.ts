/**
 * The longest delay one Node timer holds (2^31 − 1 ms, about 24.8 days); a longer one fires after
 * 1 ms with a `TimeoutOverflowWarning`.
 */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Calls `fn` once, `delayMs` from now, however long that is: past what one Node timer holds, it
 * re-arms in steps, so a client that asks for a watch of a month gets one (the API server honours
 * any `timeoutSeconds`). Returns the cancel.
 *
 * The server keeps its own rather than rx-informer's scheduler-aware helper: it runs on the wall
 * clock only, and it depends on rx-informer through its public entry points alone.
 *
 * ## Example
 * ```ts
 * const cancel = longTimeout(() => session.end(), 30 * 24 * 3600 * 1000);
 * cancel();
 * ```
 */
export function longTimeout(fn: () => void, delayMs: number): () => void {
  const due = Date.now() + delayMs;
  let timer: NodeJS.Timeout;
  const arm = (): void => {
    const left = due - Date.now();
    timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, Math.max(0, left));
  };
  arm();
  return () => clearTimeout(timer);
}
