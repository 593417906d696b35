import { asyncScheduler, Observable, Subscription, type OperatorFunction, type SchedulerLike, type Subscriber } from 'rxjs';
import { silentLogger, type Logger } from '../logger';
import type { KubeObject } from '../store/object';
import type { Snapshot } from '../store/snapshot';
import { CoalescingQueue, HandlerQueueOverflowError, type HandlerNotification } from './handlerQueue';
import { effectiveResyncPeriod, resync } from './resync';
import { batchSharing, SharedBatch, toNotification } from './sharedBatch';

export type { AddNotification, DeleteNotification, HandlerNotification, UpdateNotification } from './handlerQueue';
export { HandlerQueueOverflowError } from './handlerQueue';

/**
 * Callbacks for the changes of one informer, client-go's ResourceEventHandler. Each may return a
 * Promise: the next call to the same handler waits for it to settle (other handlers never wait).
 * A callback that throws or rejects is reported through `onError` and the `'error'` event; the
 * next notification is delivered as usual. The `info` argument is the notification being delivered,
 * shared with the informer's other handlers: read it, but do not modify or keep it.
 */
export interface ResourceHandlers<T extends KubeObject = KubeObject> {
  /** An object entered the cache (`isInInitialList` for the initial list or a late handler's catch-up). */
  onAdd?: (object: T, info: { readonly key: string; readonly isInInitialList: boolean }) => unknown;
  /** An object changed; `isResync` when this handler's resync timer re-delivers it unchanged. */
  onUpdate?: (oldObject: T, object: T, info: { readonly key: string; readonly isResync: boolean }) => unknown;
  /** An object left the cache; `finalStateUnknown` when a relist inferred the deletion. */
  onDelete?: (object: T, info: { readonly key: string; readonly finalStateUnknown: boolean }) => unknown;
  /** The handler has processed every object of the initial list (client-go's per-handler HasSynced). */
  onSynced?: () => void;
  /** A callback failed, or the queue overflowed. Errors thrown here are logged and dropped. */
  onError?: (error: unknown, notification: HandlerNotification<T>) => void;
}

/** Options of {@link handle}. */
export interface HandleOptions {
  /** Re-deliver every cached object as an update with `isResync` this often (ms). 0 = never (default); minimum 1000. */
  readonly resyncPeriod?: number;
  /** Runs the resync timer and the delivery loop. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /**
   * Most distinct objects with a pending notification. Pending notifications coalesce per object,
   * so this bounds memory when very many different objects change while the handler lags; at the
   * bound the oldest is dropped and reported as a `HandlerQueueOverflowError`. Default 100 000.
   */
  readonly maxPending?: number;
  /** Where handler failures are logged (at error level) besides `onError`. Default silent. */
  readonly logger?: Logger;
  /** Names this handler in log lines. */
  readonly name?: string;
}

/** What {@link handle} emits: progress and failures of the handler, never the objects themselves. */
export type HandlerEvent<T extends KubeObject = KubeObject> =
  /** The handler has processed the initial list. Emitted once. */
  | { readonly type: 'synced' }
  /** A callback threw or rejected (or the queue overflowed: `error` is a `HandlerQueueOverflowError`). */
  | { readonly type: 'error'; readonly error: unknown; readonly notification: HandlerNotification<T> };

/** Notifications delivered in one turn before yielding to the event loop. */
const BATCH_LIMIT = 500;
/** Milliseconds of handler work in one turn before yielding to the event loop. */
const BATCH_BUDGET_MS = 10;
const DEFAULT_MAX_PENDING = 100_000;

/**
 * Delivers an informer's changes to callbacks through a queue of its own, so that a slow,
 * throwing or asynchronous handler never delays the cache, other handlers or the process.
 *
 * 1. The first snapshot is delivered whole as adds with `isInInitialList` (a handler that
 *    starts late sees the current cache, not the changes that built it); after it, each
 *    snapshot's `changes` are delivered in order.
 * 2. Once the handler has processed the first synced snapshot it emits `'synced'` (and calls
 *    `onSynced`).
 * 3. Pending notifications coalesce per object (add+update → add, update+update → one update,
 *    add+delete → nothing), so the queue is bounded by the number of objects, not events.
 * 4. An update whose resourceVersion did not change (a relist that found the object as it was)
 *    is a resync: it is dropped, because this handler's own resync timer re-delivers every
 *    object as an update with `isResync` when it is due (`resyncPeriod`, minimum 1 s).
 * 5. Completes when the source completes and the queue is empty; errors when the source does.
 *
 * ```
 * informer$:   -a-----b-----c----------------   a: synced {x};  b: x → x';  c: y added
 * handle(h, { resyncPeriod: 1s })                 (one dash = 200 ms)
 * calls to h:  -A-----U-----A----R(x')R(y)----   A add (the first: isInInitialList), U update x → x',
 *                                                R resync update, 1 s after the first synced snapshot
 * output:      -S----------------------------   S = { type: 'synced' }, once A(x) returned
 * ```
 *
 * Costs: the queue holds one entry per object with a pending change; the initial pass and the
 * resyncs walk the immutable snapshot lazily and hold nothing. Handlers of one informer that keep
 * up share their queue: each change is coalesced once for all of them, so an extra handler costs
 * little more than its calls; one that falls behind goes on with a queue of its own, with the same
 * deliveries. Deliveries run on `scheduler`, yielding to the event loop after 500 calls or about
 * 10 ms, so a long initial list never stalls it.
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
 * @param options resync period, scheduler, queue bound, logger.
 * @returns an operator from snapshots (`informer$`) to {@link HandlerEvent}s; unsubscribing
 *   removes the handler (idempotently) and stops its timers.
 */
export function handle<T extends KubeObject = KubeObject>(handlers: ResourceHandlers<T>, options: HandleOptions = {}): OperatorFunction<Snapshot<T>, HandlerEvent<T>> {
  const period = effectiveResyncPeriod(options.resyncPeriod);
  const maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
  if (!(maxPending >= 1)) throw new RangeError(`maxPending must be at least 1, got ${maxPending}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<HandlerEvent<T>>((subscriber) => {
      const delivery = new Delivery(handlers, subscriber, scheduler, maxPending, options.logger ?? silentLogger, options.name);
      const error = (failure: unknown): void => subscriber.error(failure);
      const complete = (): void => delivery.complete();
      // Without resyncs, snapshots go straight to the queue: no tick object per snapshot and handler.
      const subscription =
        period === 0
          ? source.subscribe({ next: (snapshot) => delivery.snapshot(snapshot), error, complete })
          : source.pipe(resync<T>({ period, scheduler })).subscribe({
              next: (tick) => (tick.type === 'resync' ? delivery.resync(tick.snapshot) : delivery.snapshot(tick.snapshot)),
              error,
              complete,
            });
      return () => {
        subscription.unsubscribe();
        delivery.close();
      };
    });
}

/** A pass over a whole snapshot: the initial list (as adds) or a resync (as updates). */
interface Pass<T extends KubeObject> {
  readonly kind: 'initial' | 'resync';
  readonly snapshot: Snapshot<T>;
  readonly keys: Iterator<string>;
  /**
   * The initial pass reads one add ahead, so that the handler counts as synced as soon as it has
   * processed the last one. A resync pass reads no further than it delivers (see nextOfPass).
   */
  ahead: HandlerNotification<T> | undefined;
}

/** The state of one handler subscription: its queue, its passes, its synced flag, its loop. */
class Delivery<T extends KubeObject> {
  /** What this handler alone has pending; empty while it reads a shared batch. */
  private readonly pending: CoalescingQueue<T>;
  /** The batch this handler shares with others (see SharedBatch), with its place in it. */
  private batch: SharedBatch<T> | undefined;
  /** Index in `batch.snapshots` of the last snapshot this handler received. */
  private batchReceived = 0;
  /** Index in the batch's coalesced list of the next notification to deliver. */
  private batchNext = 0;
  private latest: Snapshot<T> | undefined;
  private pass: Pass<T> | undefined;
  /** Push sequence after which the handler counts as synced; undefined until a synced snapshot. */
  private syncedAfterSeq: number | undefined;
  private synced = false;
  private sourceDone = false;
  /** A turn is scheduled, running, or waiting for a handler's Promise. */
  private busy = false;
  private scheduled: Subscription | undefined;
  private closed = false;

  constructor(
    private readonly handlers: ResourceHandlers<T>,
    private readonly subscriber: Subscriber<HandlerEvent<T>>,
    private readonly scheduler: SchedulerLike,
    private readonly maxPending: number,
    private readonly logger: Logger,
    private readonly name: string | undefined,
  ) {
    this.pending = new CoalescingQueue<T>(maxPending);
  }

  snapshot(snapshot: Snapshot<T>): void {
    if (this.latest === undefined) {
      const pass: Pass<T> = { kind: 'initial', snapshot, keys: snapshot.keys(), ahead: undefined };
      pass.ahead = this.readPass(pass);
      this.pass = pass.ahead === undefined ? undefined : pass;
    } else if (!this.share(this.latest, snapshot)) {
      this.enqueueChanges(snapshot);
    }
    this.latest = snapshot;
    if (snapshot.synced && this.syncedAfterSeq === undefined) this.syncedAfterSeq = this.pending.lastSeq;
    this.wake();
  }

  resync(snapshot: Snapshot<T>): void {
    // A handler still working through a pass is already seeing every object.
    if (this.pass !== undefined || !this.synced) return;
    this.pass = { kind: 'resync', snapshot, keys: snapshot.keys(), ahead: undefined };
    this.wake();
  }

  complete(): void {
    this.sourceDone = true;
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.scheduled?.unsubscribe();
  }

  /**
   * Takes the snapshot's changes through a shared batch: true when they are in this handler's
   * batch, false when the caller must queue them alone. A synced handler with nothing of its own
   * pending shares; one that cannot follow its batch moves what it has not delivered into its own
   * queue first, so its queue holds what it would have held without sharing.
   */
  private share(previous: Snapshot<T>, snapshot: Snapshot<T>): boolean {
    const batch = this.batch;
    if (batch !== undefined) {
      const received = this.batchReceived + 1;
      if (received < batch.snapshots.length && batch.snapshots[received] === snapshot) {
        this.batchReceived = received; // another member folded it in already
        return true;
      }
      if (received === batch.snapshots.length && batch.tryAppend(snapshot)) {
        this.batchReceived = received;
        return true;
      }
      if (!batch.finishedAt(this.batchNext) || received !== batch.snapshots.length) {
        this.leaveBatch(batch);
        return false;
      }
      this.batch = undefined;
    }
    if (!batchSharing.enabled || !this.synced || this.pending.size > 0 || this.closed) return false;
    const joined = SharedBatch.join(previous, snapshot, this.maxPending);
    if (joined === undefined) return false;
    this.batch = joined;
    this.batchReceived = 0;
    this.batchNext = 0;
    return true;
  }

  /** Carries on alone: what this handler has not delivered from its batch moves into its own queue. */
  private leaveBatch(batch: SharedBatch<T>): void {
    this.batch = undefined;
    if (this.batchReceived === batch.snapshots.length - 1) {
      for (const notification of batch.rest(this.batchNext)) this.enqueue(notification);
      return;
    }
    // The batch holds snapshots this handler never received (its stream skips some): it has
    // delivered nothing from the batch (see next), so it queues the changes it did receive.
    for (const snapshot of batch.snapshots.slice(0, this.batchReceived + 1)) this.enqueueChanges(snapshot);
  }

  private enqueueChanges(snapshot: Snapshot<T>): void {
    for (const change of snapshot.changes) {
      const notification = toNotification(change);
      if (notification !== undefined) this.enqueue(notification);
    }
  }

  private enqueue(notification: HandlerNotification<T>): void {
    const evicted = this.pending.push(notification);
    if (evicted !== undefined) this.report(new HandlerQueueOverflowError(evicted, this.maxPending), evicted);
  }

  private wake(): void {
    if (this.busy || this.closed) return;
    this.busy = true;
    this.scheduled = scheduleTurn(this.scheduler, () => this.turn());
  }

  /** Delivers notifications until the queue is empty, a handler returns a Promise, or the turn's budget is spent. */
  private turn(): void {
    const start = this.scheduler.now();
    // Reading the clock costs about as much as a fast handler call, so it is read after 1, 2, 4 and
    // then every 8 calls while the turn has taken under a millisecond, and after every call once it has.
    let stride = 1;
    let nextClockRead = 0;
    for (let delivered = 0; !this.closed; delivered++) {
      if (delivered >= BATCH_LIMIT) return this.yieldTurn();
      if (delivered === nextClockRead) {
        const elapsed = this.scheduler.now() - start;
        if (elapsed >= BATCH_BUDGET_MS) return this.yieldTurn();
        stride = elapsed < 1 ? Math.min(stride * 2, 8) : 1;
        nextClockRead = delivered + stride;
      }
      const notification = this.next();
      if (notification === undefined) {
        this.busy = false;
        this.checkSynced();
        if (this.sourceDone && this.pending.size === 0 && this.pass === undefined && this.batchDrained()) this.subscriber.complete();
        return;
      }
      const result = this.invoke(notification);
      if (isPromiseLike(result)) {
        result.then(
          () => this.resume(),
          (error: unknown) => {
            this.report(error, notification);
            this.resume();
          },
        );
        return;
      }
      this.checkSynced();
    }
  }

  private yieldTurn(): void {
    this.scheduled = scheduleTurn(this.scheduler, () => this.turn());
  }

  private resume(): void {
    if (this.closed) return;
    this.checkSynced();
    this.turn();
  }

  /** The initial pass goes first; later, real changes go before a resync pass. */
  private next(): HandlerNotification<T> | undefined {
    const pass = this.pass;
    if (pass?.kind === 'initial') {
      const notification = pass.ahead;
      pass.ahead = this.readPass(pass);
      if (pass.ahead === undefined) this.pass = undefined;
      return notification;
    }
    const batch = this.batch;
    if (batch !== undefined) {
      // A handler delivers from its batch only once it has received every snapshot folded into it.
      if (this.batchReceived < batch.snapshots.length - 1) {
        this.leaveBatch(batch);
      } else {
        const shared = batch.at(this.batchNext);
        if (shared !== undefined) {
          this.batchNext++;
          return shared;
        }
        this.batch = undefined; // all of it received and delivered
      }
    }
    const change = this.pending.shift();
    if (change !== undefined) return change;
    if (pass === undefined) return undefined;
    const notification = this.readPass(pass);
    if (notification === undefined) this.pass = undefined;
    return notification;
  }

  /**
   * The next notification of a pass, or undefined at its end. A resync reads each object from the
   * latest snapshot when it delivers it, so it never re-delivers a state older than one the handler
   * already saw, nor an object deleted since the pass began.
   */
  private readPass(pass: Pass<T>): HandlerNotification<T> | undefined {
    for (let step = pass.keys.next(); step.done !== true; step = pass.keys.next()) {
      const key = step.value;
      if (pass.kind === 'initial') {
        const object = pass.snapshot.get(key);
        if (object !== undefined) return { type: 'add', key, object, isInInitialList: true };
        continue;
      }
      // A resync pass only advances while nothing is pending (see next), so the handler has seen
      // the latest state of every key: that is the state to re-deliver.
      const object = this.latest?.get(key);
      if (object !== undefined) return { type: 'update', key, oldObject: object, object, isResync: true };
    }
    return undefined;
  }

  private invoke(notification: HandlerNotification<T>): unknown {
    try {
      switch (notification.type) {
        // The notification itself is the `info` argument: it has the fields the callbacks declare,
        // and passing it saves an object per call and handler.
        case 'add':
          return this.handlers.onAdd?.(notification.object, notification);
        case 'update':
          return this.handlers.onUpdate?.(notification.oldObject, notification.object, notification);
        case 'delete':
          return this.handlers.onDelete?.(notification.object, notification);
      }
    } catch (error: unknown) {
      this.report(error, notification);
      return undefined;
    }
  }

  private batchDrained(): boolean {
    return this.batch === undefined || this.batch.finishedAt(this.batchNext);
  }

  private checkSynced(): void {
    if (this.synced || this.syncedAfterSeq === undefined || this.pass?.kind === 'initial') return;
    if (this.pending.headSeq() <= this.syncedAfterSeq) return;
    this.synced = true;
    try {
      this.handlers.onSynced?.();
    } catch (error: unknown) {
      this.logger.error({ handler: this.name, error }, 'onSynced threw');
    }
    this.subscriber.next({ type: 'synced' });
  }

  private report(error: unknown, notification: HandlerNotification<T>): void {
    if (this.closed) return;
    this.logger.error({ handler: this.name, key: notification.key, notification: notification.type, error }, 'handler failed');
    try {
      this.handlers.onError?.(error, notification);
    } catch (onErrorFailure: unknown) {
      this.logger.error({ handler: this.name, error: onErrorFailure }, 'onError threw');
    }
    this.subscriber.next({ type: 'error', error, notification });
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Schedules a delivery turn. On the real clock it uses `setImmediate`: a turn still yields to I/O
 * and timers, but without `asyncScheduler`'s timer floor of at least 1 ms per turn (measured: p50
 * 1.3 ms against 0.004 ms, bench/micro/schedulerDelay.ts), which was most of a handler's latency.
 * Any other scheduler, and `asyncScheduler` inside `TestScheduler.run` (whose clock then reads
 * virtual frames, not the wall clock), is used as given so virtual-time tests keep their order.
 */
function scheduleTurn(scheduler: SchedulerLike, work: () => void): Subscription {
  if (scheduler !== asyncScheduler || Math.abs(scheduler.now() - Date.now()) > 60_000) return scheduler.schedule(work);
  const immediate = setImmediate(work);
  return new Subscription(() => clearImmediate(immediate));
}
