import { inspect } from 'node:util';
import type { Observable, Subscription } from 'rxjs';

/**
 * Waiting in real time, for specs whose effects arrive over HTTP or from another process, so that
 * a regression fails naming what was expected and what was seen instead, not as jest's bare
 * "Exceeded timeout". Every deadline here is shorter than jest's testTimeout (20 s) by default.
 */

/** The default deadline of {@link eventually}: under jest's testTimeout, so this helper, not jest, reports. */
export const EVENTUALLY_MS = 10_000;

export interface EventuallyOptions {
  /** How long the assertion may keep failing; default {@link EVENTUALLY_MS}. Keep it under the test's own timeout. */
  readonly timeoutMs?: number;
  /** The pause between attempts; default 10 ms. */
  readonly intervalMs?: number;
  /**
   * How to wait between attempts instead of `intervalMs`: under jest's fake timers, one they do not
   * fake (`() => new Promise((resolve) => setImmediate(resolve))`). The deadline is read from `Date.now()`.
   */
  readonly pause?: () => Promise<unknown>;
}

/**
 * Runs `assertion` (`() => expect(...)...`) until it passes, in real time; resolves with its
 * result as soon as it does. Past the deadline, throws the last attempt's error, its message
 * prefixed with how long it was retried: jest's message names the matcher, the expected and the
 * received value.
 */
export async function eventually<T>(assertion: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? EVENTUALLY_MS;
  const intervalMs = options.intervalMs ?? 10;
  const pause = options.pause ?? (() => new Promise((resolve) => setTimeout(resolve, intervalMs)));
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw stillFailing(error, `still failing after ${timeoutMs} ms (${attempt} attempts):`);
    }
    await pause();
  }
}

/**
 * Resolves as `promise` does, or rejects after `timeoutMs` naming `description` (what the spec was
 * waiting for) and, if `seen` is given, what it saw instead: for a promise that might never settle
 * (a request closing, a process exiting, the first matching value of an observable).
 */
export function within<T>(promise: PromiseLike<T>, timeoutMs: number, description: string, seen?: () => unknown): Promise<T> {
  const timedOut = new Error(`waiting for ${description}`); // made here, so that its stack shows the spec's line, not the timer's
  Error.captureStackTrace(timedOut, within);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const instead = seen === undefined ? '' : `; saw instead: ${describe(seen())}`;
      reject(withMessage(timedOut, `timed out after ${timeoutMs} ms waiting for ${description}${instead}`));
    }, timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Subscribes to `source` and resolves with its first value for which `assertion`
 * (`(value) => expect(value)...`) passes, then unsubscribes. Past the deadline (default
 * {@link EVENTUALLY_MS}), or when `source` completes first, rejects with the last value's failed
 * assertion, or, when no value came at all, with the assertion's text; `source`'s own error
 * passes through.
 */
export function firstSatisfying<T>(source: Observable<T>, assertion: (value: T) => void, options: { readonly timeoutMs?: number } = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? EVENTUALLY_MS;
  const failed = new Error(`no value satisfied ${String(assertion)}`); // made here, so that its stack shows the spec's line
  Error.captureStackTrace(failed, firstSatisfying);
  return new Promise<T>((resolve, reject) => {
    let values = 0;
    let lastFailure: unknown;
    let done = false;
    let subscription: Subscription | undefined;
    const finish = (settle: () => void): void => {
      done = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
      settle();
    };
    const fail = (why: string): void =>
      finish(() =>
        reject(
          values === 0
            ? withMessage(failed, `${why}, and no value came to check against ${String(assertion)}`)
            : stillFailing(lastFailure, `${why}; the last of ${values} values failed:`),
        ),
      );
    const timer = setTimeout(() => fail(`no value within ${timeoutMs} ms`), timeoutMs);
    subscription = source.subscribe({
      next: (value) => {
        if (done) return;
        values++;
        try {
          assertion(value);
        } catch (error) {
          lastFailure = error;
          return;
        }
        finish(() => resolve(value));
      },
      error: (error: unknown) => {
        if (!done) finish(() => reject(error));
      },
      complete: () => {
        if (!done) fail('the stream completed');
      },
    });
    if (done) subscription.unsubscribe(); // settled while subscribing, before `subscription` was assigned
  });
}

function describe(value: unknown): string {
  return typeof value === 'string' ? value : inspect(value, { depth: 4, breakLength: 120 });
}

/** The last failure, re-thrown with `prefix` before its message. */
function stillFailing(error: unknown, prefix: string): unknown {
  if (!(error instanceof Error)) return new Error(`${prefix} ${describe(error)}`);
  return withMessage(error, `${prefix}\n${error.message}`);
}

/** `error` with `message`, in its stack's head as well (jest prints the stack's head when it holds the message). */
export function withMessage(error: Error, message: string): Error {
  const stack = error.stack ?? ''; // read before the message changes: V8 formats the stack on its first read
  const frames = stack.search(/\n\s+at /);
  error.message = message;
  error.stack = `${error.name}: ${message}${frames < 0 ? '' : stack.slice(frames)}`;
  return error;
}
