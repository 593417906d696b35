import type { SchedulerLike, Subscription } from 'rxjs';

/**
 * Asynchronous work in virtual time: a Promise-like that settles on a scheduler, calling its
 * callbacks at once (a real Promise would call them in a microtask, after a virtual scheduler's
 * `flush()` has run on without them). It ends `duration` ms after it starts, or `abortLatency` ms
 * after `signal` aborts if that comes first (then it rejects with the signal's reason), as a
 * reconcile that passes its signal to its requests would.
 */
export interface VirtualTask extends PromiseLike<undefined> {
  /** Whether it is still running. */
  readonly running: boolean;
  /** Ends it now without settling, as a process that dies ends its work: nobody hears of it. */
  kill(): void;
}

export interface VirtualTaskOptions {
  readonly duration: number;
  readonly signal?: AbortSignal;
  /** How long it runs on after its signal aborts. Default 0. */
  readonly abortLatency?: number;
  /** Called when it ends, before its callbacks. */
  readonly onEnd?: (outcome: 'done' | 'aborted') => void;
}

export function virtualTask(scheduler: SchedulerLike, options: VirtualTaskOptions): VirtualTask {
  const { duration, signal, abortLatency = 0, onEnd } = options;
  const callbacks: { readonly onDone?: (value: undefined) => unknown; readonly onFailed?: (reason: unknown) => unknown }[] = [];
  let outcome: { readonly done: true } | { readonly done: false; readonly reason: unknown } | undefined;
  const settle = (result: { readonly done: true } | { readonly done: false; readonly reason: unknown }): void => {
    if (outcome !== undefined) return;
    outcome = result;
    timer.unsubscribe();
    abortTimer?.unsubscribe();
    signal?.removeEventListener('abort', onAbort);
    onEnd?.(result.done ? 'done' : 'aborted');
    for (const callback of callbacks.splice(0)) deliver(callback);
  };
  const deliver = (callback: (typeof callbacks)[number]): void => {
    if (outcome?.done === true) callback.onDone?.(undefined);
    else if (outcome !== undefined) callback.onFailed?.(outcome.reason);
  };
  let abortTimer: Subscription | undefined;
  const onAbort = (): void => {
    abortTimer = scheduler.schedule(() => settle({ done: false, reason: signal?.reason }), abortLatency);
  };
  const timer = scheduler.schedule(() => settle({ done: true }), duration);
  if (signal?.aborted === true) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const task: VirtualTask = {
    get running() {
      return outcome === undefined;
    },
    kill() {
      if (outcome !== undefined) return;
      outcome = { done: false, reason: new Error('killed') };
      callbacks.length = 0;
      timer.unsubscribe();
      abortTimer?.unsubscribe();
      signal?.removeEventListener('abort', onAbort);
    },
    then<A = undefined, B = never>(onDone?: ((value: undefined) => A | PromiseLike<A>) | null, onFailed?: ((reason: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {
      const callback = { onDone: onDone ?? undefined, onFailed: onFailed ?? undefined };
      if (outcome === undefined) callbacks.push(callback);
      else deliver(callback);
      // Chaining is not needed by the code under test; a chained result would not be awaited.
      return task as unknown as PromiseLike<A | B>;
    },
  };
  return task;
}
