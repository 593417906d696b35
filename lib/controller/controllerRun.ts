import {
  asyncScheduler,
  connect,
  endWith,
  filter,
  first,
  ignoreElements,
  map,
  merge,
  mergeMap,
  Observable,
  race,
  Subject,
  takeUntil,
  tap,
  timer,
  type SchedulerLike,
  type Subscription,
} from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import { longDelays } from '../base/longDelays';
import type { KubeObject } from '../base/object';
import { effectiveResyncPeriod } from '../handlers/resync';
import type { Resource } from '../resources/resource';
import { objectKey } from '../store/keys';
import { settledSnapshot } from '../store/indexedSnapshot';
import { reconcile, type ReconcileOptions } from '../workqueue/reconcile';
import type { ReconcileOutcome } from '../workqueue/reconcileResult';
import type { ReconcileContext } from '../workqueue/workers';
import type { ControllerEvent, ReadAfterWriteMetricEvent, StaleCacheEvent } from './controllerEvents';
import { controllerKeys, type KeySource } from './controllerKeys';
import type { ControllerReconciler } from './controllerRequest';
import type { ObjectClient } from './objectClient';
import { recordingWrites, type WriteOutcome } from './recordingWrites';
import { ordersResourceVersions } from './resourceVersions';
import { resourceId, WatchedSnapshots, type WatchedResource } from './watchedResources';
import { WriteExpectations, type PendingWrite } from './writeExpectations';
import { outcomeOnceSettled } from './outcomeOnceSettled';
import { worlds, type World } from './worlds';

/** Options of a controller's `run()`: the work queue's (see `reconcile`), and the controller's own. All optional. */
export interface ControllerRunOptions extends ReconcileOptions {
  /**
   * Reconcile every primary key again this often (ms): client-go's resync, a safety net for side
   * effects no event announced. It bypasses the predicates. 0 = never (default); minimum 1000.
   * O(primaries) per period.
   */
  readonly resyncPeriod?: number;
  /**
   * How long (ms) after a write's answer the next reconcile of its key waits, at most, for the
   * cache to show it (reads that follow your own writes). Default 10 000: a watch shows a write
   * within milliseconds, so a wait this long means the watch is down or far behind, and the
   * reconcile goes ahead, reading the stale cache, with a `staleCache` event, a `gaveUp` metric and
   * a warning. The wait counts towards the reconcile's `timeout`: keep it shorter. 0 never waits.
   */
  readonly readAfterWriteTimeout?: number;
  /**
   * Whether written resourceVersions may be ordered against cached ones. `'auto'` (default) asks
   * the server's `/version` once per run: 1.35 and later promise order (KEP-5504); until it
   * answers, and for older or unknown servers, versions are compared for equality only.
   * `'ordered'` and `'opaque'` decide without asking.
   */
  readonly resourceVersionOrder?: 'auto' | 'ordered' | 'opaque';
  /** Receives how long reconciles waited for the cache to show their key's writes. Default none. */
  readonly readAfterWriteMetrics?: (event: ReadAfterWriteMetricEvent) => void;
}

/** What a controller run is made of: its informers (the primary first) and where keys come from. */
export interface ControllerPlan<T extends KubeObject> {
  readonly resource: Resource<T>;
  readonly watched: readonly WatchedResource[];
  readonly sources: readonly KeySource[];
  readonly client: ObjectClient | undefined;
}

/**
 * Runs a controller: the worlds of its informers feed keys into `reconcile`, whose function reads
 * the world as it is when a reconcile starts, once the caches show the writes the reconciles of
 * its key made before. A cold Observable: each subscription is a run of its own.
 */
export function runController<T extends KubeObject>(plan: ControllerPlan<T>, reconciler: ControllerReconciler<T>, options: ControllerRunOptions): Observable<ControllerEvent> {
  const resyncPeriod = effectiveResyncPeriod(options.resyncPeriod);
  const bound = options.readAfterWriteTimeout ?? 10_000;
  if (!(bound >= 0) || !Number.isFinite(bound)) throw new RangeError(`readAfterWriteTimeout must be a finite number of ms >= 0, got ${bound}`);
  const reconcileOptions: ReconcileOptions = { ...options, name: options.name ?? plan.resource.plural };
  // Checked now, not at the first subscription.
  reconcile(() => undefined, reconcileOptions);
  return new Observable<ControllerEvent>((subscriber) => {
    const run = new Run(plan, reconciler, { ...options, name: reconcileOptions.name!, bound }, (event) => subscriber.next(event));
    const resync = (world$: Observable<World>): Observable<string> =>
      resyncPeriod === 0
        ? world$.pipe(ignoreElements())
        : world$.pipe(
            first(),
            mergeMap(() => timer(resyncPeriod, resyncPeriod, longDelays(options.scheduler ?? asyncScheduler))),
            mergeMap(() => run.primaryKeys()),
            takeUntil(world$.pipe(ignoreElements(), endWith(undefined))),
          );
    const queue = worlds(plan.watched.map((entry) => entry.informer))
      .pipe(
        tap((world) => run.observe(world)),
        connect((world$) => merge(controllerKeys(world$, plan.sources, () => run.snapshots()), resync(world$))),
        reconcile((key, context) => run.reconcileOne(key, context), reconcileOptions),
      )
      .subscribe(subscriber);
    return () => {
      queue.unsubscribe();
      run.stop();
    };
  });
}

interface RunConfig {
  readonly name: string;
  readonly bound: number;
  readonly scheduler?: SchedulerLike;
  readonly logger?: Logger;
  readonly resourceVersionOrder?: 'auto' | 'ordered' | 'opaque';
  readonly readAfterWriteMetrics?: (event: ReadAfterWriteMetricEvent) => void;
}

/** The state of one run: the latest world, the writes not seen yet, and who waits for them. */
class Run<T extends KubeObject> {
  private latest: World | undefined;
  private ordered: boolean;
  private readonly expectations: WriteExpectations;
  private readonly met$ = new Subject<string>();
  private readonly indexOf: ReadonlyMap<string, number>;
  private readonly scheduler: SchedulerLike;
  private readonly timers: SchedulerLike;
  private readonly logger: Logger;
  private readonly version: Subscription | undefined;

  constructor(
    private readonly plan: ControllerPlan<T>,
    private readonly reconciler: ControllerReconciler<T>,
    private readonly config: RunConfig,
    private readonly emit: (event: StaleCacheEvent) => void,
  ) {
    this.indexOf = new Map(plan.watched.map((entry, index) => [resourceId(entry.resource), index]));
    this.scheduler = config.scheduler ?? asyncScheduler;
    this.timers = longDelays(this.scheduler);
    this.logger = config.logger ?? defaultLogger;
    this.expectations = new WriteExpectations(plan.watched.length, () => this.ordered, (key) => this.met$.next(key));
    const order = config.resourceVersionOrder ?? 'auto';
    this.ordered = order === 'ordered';
    if (order === 'auto' && plan.client !== undefined) {
      this.version = plan.client.version().subscribe({
        next: (version) => (this.ordered = ordersResourceVersions(version)),
        error: (error: unknown) =>
          this.logger.info({ controller: config.name, error: error instanceof Error ? error.message : String(error) }, 'could not read the server version: resourceVersions are compared for equality only'),
      });
    }
  }

  /** Each world, before any key of it is emitted. */
  observe(world: World): void {
    // What reconciles read later is the state, not the changes (handed on once, to controllerKeys).
    this.latest = world.changed === undefined ? world : { snapshots: world.snapshots.map(settledSnapshot), changed: world.changed };
    this.expectations.expire(this.scheduler.now() - this.config.bound);
    if (world.changed !== undefined) this.expectations.observe(world.changed, world.snapshots[world.changed]!);
  }

  snapshots(): WatchedSnapshots {
    return new WatchedSnapshots(this.plan.watched, this.indexOf, this.latest!.snapshots);
  }

  primaryKeys(): string[] {
    return this.latest === undefined ? [] : [...this.latest.snapshots[0]!.keys()];
  }

  stop(): void {
    this.version?.unsubscribe();
    this.met$.complete();
  }

  /**
   * One reconcile: once the cache shows the key's earlier writes (or the bound passes), the
   * reconciler on the world as it is then. With nothing to wait for, the reconciler's own output,
   * so that the work queue treats it as it would the reconciler (a Promise awaited at a stop, an
   * Observable unsubscribed). After a wait, a Promise of the outcome that settles only once
   * nothing of the reconcile runs, since the queue waits for it at a stop: the wait, and an
   * Observable reconcile after it, end when the reconcile's signal aborts (rejecting with its
   * reason); a Promise reconcile is followed to its end.
   */
  reconcileOne(key: string, context: ReconcileContext): ReturnType<ControllerReconciler<T>> {
    const unseen = this.expectations.unseen(key);
    if (unseen.length === 0) return this.call(key, context);
    const started = this.scheduler.now();
    const deadline = Math.max(...unseen.map((write) => write.at)) + this.config.bound;
    const caughtUp$ = this.met$.pipe(
      filter((met) => met === key),
      first(),
      map(() => true),
    );
    const gaveUp$ = timer(Math.max(0, deadline - started), this.timers).pipe(map(() => false));
    const { signal } = context;
    return new Promise<ReconcileOutcome>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      let waiting: Subscription | undefined;
      const onAbort = (): void => {
        waiting?.unsubscribe();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiting = race(caughtUp$, gaveUp$).subscribe((caughtUp) => {
        // From here the reconcile is the reconciler's: its output decides when it has settled.
        signal.removeEventListener('abort', onAbort);
        const waited = this.scheduler.now() - started;
        if (caughtUp) this.measure({ type: 'caughtUp', key, waitedSeconds: waited / 1000 });
        else this.gaveUp(key, waited);
        try {
          resolve(outcomeOnceSettled(this.call(key, context), signal));
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  private gaveUp(key: string, waited: number): void {
    const unseen = this.expectations.unseen(key).map((write) => this.describe(write));
    this.expectations.forget(key);
    this.measure({ type: 'gaveUp', key, waitedSeconds: waited / 1000, unseen: unseen.length });
    this.logger.warn({ controller: this.config.name, key, waited, unseen }, 'reconcile goes ahead with a cache that has not shown its own writes');
    this.emit({ type: 'staleCache', key, waited, unseen });
  }

  private describe(write: PendingWrite): StaleCacheEvent['unseen'][number] {
    const informer = this.plan.watched[write.informer]!.informer.name;
    return { informer, key: write.key, resourceVersion: write.resourceVersion, ...(write.deleted ? { deleted: true as const } : {}) };
  }

  /** Calls the reconciler on the world as it is now: one read of every snapshot. */
  private call(key: string, context: ReconcileContext): ReturnType<ControllerReconciler<T>> {
    const snapshots = this.snapshots();
    const primary = this.latest!.snapshots[0]!.get(key) as T | undefined;
    const writes = recordingWrites(this.plan.client, context.signal, (outcome) => this.record(key, outcome));
    return this.reconciler({ key, primary, resource: this.plan.resource, snapshots, writes, signal: context.signal, failures: context.failures });
  }

  /** A write's answer: pending until the informer of its resource shows it, if it ever can. */
  private record(primaryKey: string, outcome: WriteOutcome): void {
    if (this.config.bound === 0) return;
    const index = this.indexOf.get(resourceId(outcome.resource));
    if (index === undefined || this.latest === undefined) return;
    // Only what the informer can show: an object outside its namespace or selectors never arrives.
    // (A deletion is seen at once when the cache never held the object.)
    if (!outcome.deleted && !this.plan.watched[index]!.shows(outcome.object)) return;
    this.expectations.record(
      {
        primaryKey,
        informer: index,
        key: objectKey(outcome.object),
        uid: outcome.uid,
        resourceVersion: outcome.resourceVersion,
        deleted: outcome.deleted,
        at: this.scheduler.now(),
      },
      this.latest.snapshots[index]!,
    );
  }

  private measure(event: ReadAfterWriteMetricEvent): void {
    const sink = this.config.readAfterWriteMetrics;
    if (sink === undefined) return;
    try {
      sink(event);
    } catch (error) {
      this.logger.error({ controller: this.config.name, error: error instanceof Error ? error.message : String(error) }, 'the readAfterWriteMetrics sink threw');
    }
  }
}
