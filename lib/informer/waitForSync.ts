import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';
import type { Health } from '../reflector/health';
import type { Informer } from './informer';
import { InformerError } from '../sources/errors';
import type { KubeObject } from '../store/object';
import type { Snapshot } from '../store/snapshot';

/** controller-runtime's CacheSyncTimeout: long enough for a big first list, short enough to notice. */
const DEFAULT_TIMEOUT_MS = 120_000;

/** Options of {@link waitForSync}. */
export interface WaitForSyncOptions {
  /** Give up after this many ms. Default 120 000; `Infinity` waits for ever. */
  readonly timeout?: number;
  /** Runs the timeout. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Stop waiting when this aborts; the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** An informer that was not synced when {@link waitForSync} gave up, and what it was doing. */
export interface UnsyncedInformer {
  readonly name: string;
  /** Its latest health report: the phase it was stuck in and its last error, if any. */
  readonly health: Health;
}

/**
 * {@link waitForSync} timed out with several informers unsynced, or with one that reported no
 * error (a list still running, a slow server). `cause` is the first unsynced informer's last error.
 */
export class SyncTimeoutError extends InformerError {
  readonly kind = 'timeout' as const;
  readonly timeoutMs: number;
  readonly unsynced: readonly UnsyncedInformer[];

  constructor(timeoutMs: number, unsynced: readonly UnsyncedInformer[]) {
    const why = unsynced.map(({ name, health }) => `${name} (${health.phase}${health.lastError ? `: ${health.lastError.message}` : ''})`);
    super(`informers not synced after ${timeoutMs} ms: ${why.join(', ')}`, undefined, { cause: unsynced.find((u) => u.health.lastError)?.health.lastError });
    this.timeoutMs = timeoutMs;
    this.unsynced = unsynced;
  }
}

/** The synced snapshot of each informer, in the order given. */
export type SyncedSnapshots<I extends readonly Informer<KubeObject>[]> = {
  -readonly [K in keyof I]: I[K] extends Informer<infer T> ? Snapshot<T> : never;
};

/**
 * Waits until every informer has applied its initial list, client-go's WaitForCacheSync, but one
 * that cannot hang for ever on a 403 or a missing CRD: after `timeout` it rejects with the reason.
 *
 * Waiting subscribes to each informer's `synced$`, which starts the watch if nothing runs it and
 * lets it go once synced: keep `informer$` subscribed (or the factory started) to keep the cache.
 *
 * 1. Resolves with the first synced snapshot of each informer, in the order given.
 * 2. On timeout, when exactly one informer is unsynced and it reports an error, rejects with that
 *    error (a `StatusError` with code 403 or 404, a `NetworkError` for a refused connection ...).
 * 3. Otherwise rejects with a {@link SyncTimeoutError} naming each unsynced informer, its phase and
 *    its last error.
 * 4. Rejects at once with the error of an informer whose cache fails (`informer$` errors: a
 *    throwing transform or index function).
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { informer, pods, configMaps, waitForSync, StatusError } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * const podInformer = informer(kubeConfig, pods);
 * const configMapInformer = informer(kubeConfig, configMaps);
 * const running = [podInformer.informer$.subscribe(), configMapInformer.informer$.subscribe()];
 * try {
 *   const [podSnapshot, configMapSnapshot] = await waitForSync([podInformer, configMapInformer], { timeout: 30_000 });
 *   console.log(podSnapshot.size, configMapSnapshot.size);
 * } catch (error) {
 *   if (error instanceof StatusError && error.code === 403) console.error('RBAC:', error.message);
 *   throw error;
 * }
 * ```
 *
 * @param informers the informers to wait for.
 * @param options timeout (default 120 s), scheduler, abort signal.
 * @returns a promise of the synced snapshots, in the order of `informers`.
 */
export function waitForSync<const I extends readonly Informer<KubeObject>[]>(informers: I, options: WaitForSyncOptions = {}): Promise<SyncedSnapshots<I>> {
  const timeoutMs = options.timeout ?? DEFAULT_TIMEOUT_MS;
  if (Number.isNaN(timeoutMs) || timeoutMs < 0) return Promise.reject(new RangeError(`waitForSync timeout must be >= 0 ms, got ${timeoutMs}`));
  const scheduler = options.scheduler ?? asyncScheduler;
  const signal = options.signal;

  return new Promise<SyncedSnapshots<I>>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const subscriptions = new Subscription();
    const snapshots: (Snapshot<KubeObject> | undefined)[] = informers.map(() => undefined);
    const healths: Health[] = [];
    let remaining = informers.length;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      subscriptions.unsubscribe();
      outcome();
    };

    const onAbort = (): void => settle(() => reject(signal?.reason));
    if (signal !== undefined) {
      signal.addEventListener('abort', onAbort, { once: true });
      subscriptions.add(() => signal.removeEventListener('abort', onAbort));
    }

    informers.forEach((informer, index) => {
      subscriptions.add(informer.health$.subscribe((health) => (healths[index] = health)));
    });
    informers.forEach((informer, index) => {
      if (settled) return;
      subscriptions.add(
        informer.synced$.subscribe({
          next: (snapshot) => {
            if (snapshots[index] !== undefined) return;
            snapshots[index] = snapshot;
            if (--remaining === 0) settle(() => resolve(snapshots as unknown as SyncedSnapshots<I>));
          },
          // The cache itself failed (a throwing transform or index function): no point waiting.
          error: (error: unknown) => settle(() => reject(error)),
        }),
      );
    });
    if (remaining === 0) {
      settle(() => resolve(snapshots as unknown as SyncedSnapshots<I>));
      return;
    }

    if (timeoutMs !== Infinity) {
      const unreported: Health = { phase: 'idle', attempt: 0, lastError: undefined, resourceVersion: '', since: scheduler.now(), retryInMs: undefined, listedItems: undefined, remainingItemCount: undefined };
      subscriptions.add(
        scheduler.schedule(() => {
          const unsynced = informers
            .map((informer, index) => ({ name: informer.name, health: healths[index] ?? unreported, synced: snapshots[index] !== undefined }))
            .filter((entry) => !entry.synced)
            .map(({ name, health }) => ({ name, health }));
          const only = unsynced.length === 1 ? unsynced[0].health.lastError : undefined;
          settle(() => reject(only ?? new SyncTimeoutError(timeoutMs, unsynced)));
        }, timeoutMs),
      );
    }
  });
}
