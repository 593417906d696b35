import { asyncScheduler, Subscription, type SchedulerLike } from 'rxjs';
import { longDelays } from '../base/longDelays';
import type { Health } from '../reflector/health';
import type { Informer } from './informer';
import { idleHealth } from './informerHealth';
import { attributeTo, InformerError, isBadRequest } from '../base/errors';
import type { KubeObject } from '../base/object';
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
    const why = unsynced.map(({ name, health }) => `${name} (${health.phase}${health.lastError ? `: ${withoutName(health.lastError.message, name)}` : ''})`);
    super(`informers not synced after ${timeoutMs} ms: ${why.join(', ')}`, undefined, { cause: unsynced.find((u) => u.health.lastError)?.health.lastError });
    this.timeoutMs = timeoutMs;
    this.unsynced = unsynced;
  }
}

/** An error message without the informer name it starts with, when it names the informer. */
function withoutName(message: string, name: string): string {
  return message.startsWith(`${name}: `) ? message.slice(name.length + 2) : message;
}

/**
 * An informer stopped before it synced, so {@link waitForSync} cannot wait for it: its factory
 * was shut down, or its cache failed (then `cause` is why).
 */
export class InformerStoppedError extends InformerError {
  readonly kind = 'stopped' as const;

  constructor(informer: string, cause?: unknown) {
    const why = cause === undefined ? '' : `: ${cause instanceof Error ? cause.message : String(cause)}`;
    super(`${informer} stopped before it synced${why}`, undefined, { cause });
    Object.defineProperty(this, 'informer', { value: informer, enumerable: true });
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
 * Waiting subscribes to each informer's `synced$`, which starts the watch if nothing runs it; once
 * synced it lets go, and the informer keeps its cache for its grace period (by default until the
 * current task ends): subscribe to `informer$` right after (or start the factory) to keep it.
 *
 * 1. Resolves with the first synced snapshot of each informer, in the order given.
 * 2. Rejects at once when an informer backs off from a 400 Bad Request (a field selector the
 *    resource does not support, say): no retry can fix it. The error names the informer.
 * 3. On timeout, when exactly one informer is unsynced and it reports an error, rejects with that
 *    error (a `StatusError` with code 403, a `ResourceGoneError` for a resource not served (a CRD
 *    not installed), a `NetworkError` for a refused connection ...), whose message starts with
 *    the informer's name.
 * 4. Otherwise rejects with a {@link SyncTimeoutError} naming each unsynced informer, its phase and
 *    its last error.
 * 5. Rejects at once with an {@link InformerStoppedError} for an informer that stops before it
 *    syncs: its factory shut down, or its cache failed (`cause` says why).
 *
 * Objects the cache rejects (a throwing transform) do not stop a sync: they are left out and
 * counted on `health$`.
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

    const cannotHeal = (index: number, health: Health): void => {
      if (snapshots[index] === undefined && health.phase === 'backingOff' && isBadRequest(health.lastError)) {
        const error = attributeTo(health.lastError, informers[index]!.name);
        settle(() => reject(error));
      }
    };
    informers.forEach((informer, index) => {
      subscriptions.add(
        informer.health$.subscribe((health) => {
          healths[index] = health;
          cannotHeal(index, health);
        }),
      );
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
          // Stopped (a factory shut down) or failed: it will not sync, so there is no point waiting.
          error: (error: unknown) => settle(() => reject(new InformerStoppedError(informer.name, error))),
          complete: () => {
            if (snapshots[index] === undefined) settle(() => reject(new InformerStoppedError(informer.name)));
          },
        }),
      );
    });
    if (remaining === 0) {
      settle(() => resolve(snapshots as unknown as SyncedSnapshots<I>));
      return;
    }

    if (timeoutMs !== Infinity) {
      const unreported: Health = idleHealth(scheduler.now());
      subscriptions.add(
        longDelays(scheduler).schedule(() => {
          const unsynced = informers
            .map((informer, index) => ({ name: informer.name, health: healths[index] ?? unreported, synced: snapshots[index] !== undefined }))
            .filter((entry) => !entry.synced)
            .map(({ name, health }) => ({ name, health }));
          const only = unsynced.length === 1 && unsynced[0].health.lastError ? attributeTo(unsynced[0].health.lastError, unsynced[0].name) : undefined;
          settle(() => reject(only ?? new SyncTimeoutError(timeoutMs, unsynced)));
        }, timeoutMs),
      );
    }
  });
}
