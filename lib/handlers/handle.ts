import { asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import type { KubeObject } from '../base/object';
import { operate, operatorObserver } from '../base/operate';
import type { Snapshot } from '../store/snapshot';
import { HandlerSubscription } from './handlerSubscription';
import type { HandlerEvent, ResourceHandlers } from './resourceHandlers';
import { effectiveResyncPeriod, resync, type ResyncTick } from './resync';

/** Options of {@link handle}. */
export interface HandleOptions {
  /** Re-deliver every cached object as an update with `isResync` this often (ms). 0 = never (default); minimum 1000. */
  readonly resyncPeriod?: number;
  /** Runs the resync timer and the delivery loop. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /**
   * Most distinct objects with a pending notification. Pending notifications coalesce per object,
   * so this bounds memory when very many different objects change while the handler lags. A
   * handler that would go past it stops queuing, is told once with a `HandlerQueueOverflowError`,
   * and catches up from the difference between what it saw and the cache: no change is lost.
   * Default 100 000.
   */
  readonly maxPending?: number;
  /**
   * Where handler failures (error level) and overflows (warn level) are logged besides `onError`.
   * Default `defaultLogger`: warnings and errors to stderr; `silentLogger` for none.
   */
  readonly logger?: Logger;
  /** Names this handler in log lines. */
  readonly name?: string;
}

const DEFAULT_MAX_PENDING = 100_000;

/**
 * Delivers an informer's changes to callbacks at the handler's own pace, so that a slow,
 * throwing or asynchronous handler never delays the cache, other handlers or the process.
 *
 * 1. The first snapshot is delivered whole as adds with `isInInitialList` (a handler that
 *    starts late sees the current cache, not the changes that built it); after it, each
 *    snapshot's `changes` are delivered in order.
 * 2. Once the handler has processed the first synced snapshot it emits `'synced'` (and calls
 *    `onSynced`).
 * 3. Changes still pending when another change to the same object arrives coalesce per object
 *    (add+update → add, update+update → one update, add+delete → nothing, delete+add → delete
 *    then add), so what is pending is bounded by the number of objects, not events.
 * 4. A handler that would have more than `maxPending` objects pending stops queuing (reported
 *    once as a `HandlerQueueOverflowError`) and, when ready, receives the difference between what
 *    it saw and the cache: adds, updates from the state it saw, deletes with `finalStateUnknown`.
 *    No change is lost; only intermediate states of objects that changed several times are.
 * 5. An update whose resourceVersion did not change (a relist that found the object as it was)
 *    is a resync: it is dropped, because this handler's own resync timer re-delivers every
 *    object as an update with `isResync` when it is due (`resyncPeriod`, minimum 1 s).
 * 6. Completes when the source completes and everything is delivered; errors when the source does,
 *    or when its own work throws (a snapshot it cannot read, a scheduler that cannot schedule):
 *    what a handler throws or rejects with is an `'error'` event instead, and delivery goes on.
 *
 * ```
 * informer$:   -a-----b-----c----------------   a: synced {x};  b: x → x';  c: y added
 * handle(h, { resyncPeriod: 1s })                 (one dash = 200 ms)
 * calls to h:  -A-----U-----A----R(x')R(y)----   A add (the first: isInInitialList), U update x → x',
 *                                                R resync update, 1 s after the first synced snapshot
 * output:      -S----------------------------   S = { type: 'synced' }, once A(x) returned
 * ```
 *
 * Costs: a handler that keeps up reads each snapshot's `changes` in place, with a cursor, and
 * passes each change itself as the notification: no queue entry, no map operation, no copy, no
 * allocation per change. Only when a second change to an object arrives before the first is
 * delivered (the indexer numbers its snapshots, so telling costs two comparisons per snapshot) does
 * the handler move what it has not delivered into a coalescing queue of its own, one entry per
 * object. A handler past `maxPending` holds the snapshot it saw and at most `maxPending` entries.
 * The initial pass, resyncs and catch-ups walk immutable snapshots lazily. Nothing is shared
 * between subscriptions but the snapshots and their changes. Deliveries run on `scheduler`,
 * yielding to the event loop after 500 calls or about 10 ms, so a long initial list never stalls
 * it.
 *
 * ## Example
 * ```ts
 * import type { KubeConfig } from '@kubernetes/client-node';
 * import { handle, informer, pods, type Pod } from 'rx-informer';
 *
 * declare const kubeConfig: KubeConfig;
 * declare function reconcile(pod: Pod): Promise<void>;
 * const podInformer = informer(kubeConfig, pods);
 * podInformer.informer$
 *   .pipe(handle({
 *     onAdd: (pod) => console.log('added', pod.metadata.name),
 *     onUpdate: async (oldPod, pod, { isResync }) => { if (!isResync) await reconcile(pod); },
 *     onDelete: (pod, { finalStateUnknown }) => console.log('gone', pod.metadata.name, finalStateUnknown),
 *     onError: (error) => console.error(error),
 *   }, { resyncPeriod: 60_000 }))
 *   .subscribe((event) => { if (event.type === 'synced') console.log('handler synced'); });
 * ```
 *
 * @param handlers the callbacks; all optional.
 * @param options resync period, scheduler, bound on pending objects, logger.
 * @returns an operator from snapshots (`informer$`) to {@link HandlerEvent}s; unsubscribing
 *   removes the handler (idempotently) and stops its timers.
 */
export function handle<T extends KubeObject = KubeObject>(handlers: ResourceHandlers<T>, options: HandleOptions = {}): OperatorFunction<Snapshot<T>, HandlerEvent<T>> {
  const period = effectiveResyncPeriod(options.resyncPeriod);
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  if (!(maxPending >= 1)) throw new RangeError(`maxPending must be at least 1, got ${maxPending}`);
  const settings = { handlers, maxPending, scheduler: options.scheduler ?? asyncScheduler, logger: options.logger ?? defaultLogger, name: options.name };
  return operate((source, subscriber) => {
    const handler = new HandlerSubscription<T>(settings, subscriber);
    const complete = (): void => handler.complete();
    // Without resyncs, snapshots go straight to the handler: no tick object per snapshot and handler.
    const upstream =
      period === 0
        ? source.subscribe(operatorObserver<Snapshot<T>>(subscriber, { next: (snapshot) => handler.snapshot(snapshot), complete }))
        : source.pipe(resync<T>({ period, scheduler: settings.scheduler })).subscribe(
            operatorObserver<ResyncTick<T>>(subscriber, {
              next: (tick) => (tick.type === 'resync' ? handler.resync(tick.snapshot) : handler.snapshot(tick.snapshot)),
              complete,
            }),
          );
    return () => {
      upstream.unsubscribe();
      handler.close();
    };
  });
}
