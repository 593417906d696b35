import { Observable, type Subscription } from 'rxjs';
import type { Logger } from '../../lib/base/logger';
import { silentLogger } from '../../lib/base/logger';
import { controller, type ControllerEvent, type ControllerRequest, type ControllerRunOptions } from '../../lib/controller/controller';
import type { ReadAfterWriteMetricEvent } from '../../lib/controller/controllerEvents';
import { configMaps, type ConfigMap } from '../../lib/resources/builtins';
import { requeueAfter } from '../../lib/workqueue/reconcileResult';
import { widgets, type Widget } from '../../apiserver/src';
import { Cluster, settlePromises } from './controllerHarness';

/**
 * Reads that follow your own writes: after a reconcile writes an object the controller watches
 * and the server answers with resourceVersion r, the next reconcile of that key starts only once
 * the cache holds that object at r or later (or without it, after a delete), waiting at most
 * `readAfterWriteTimeout` from the write's answer; past it the reconcile goes ahead, says so (a
 * `staleCache` event, a metric, a warning) and reads what there is.
 *
 * The watch here is 100 ms late (unless a spec says otherwise) and a write takes 10 ms (applied
 * at 5, answered at 10): the caches sync at 100, the first reconcile runs then, and its write's
 * event reaches the cache at 205. The first reconcile asks to run again 20 ms after it ends: a
 * reconcile right after its own write, at 130.
 */

const NS = 'shop';
let cluster: Cluster;
let running: Subscription | undefined;
let seen: { readonly at: number; readonly size: number | undefined; readonly child: string | undefined }[];
let events: ControllerEvent[];
let metrics: ReadAfterWriteMetricEvent[];
let warnings: string[];

const logger: Logger = { ...silentLogger, warn: (_fields, message) => void warnings.push(message) };

beforeEach(() => {
  cluster = new Cluster();
  cluster.watchLatency = 100;
  cluster.writeLatency = 10;
  running = undefined;
  seen = [];
  events = [];
  metrics = [];
  warnings = [];
  cluster.store.create(widgets, { metadata: { name: 'a', namespace: NS }, spec: { size: 1 } });
});
afterEach(() => running?.unsubscribe());

/** A reconcile of `ns/a` that records what it reads; its first run writes, then asks to run again in 20 ms. */
function firstRunWrites(write: (request: ControllerRequest<Widget>) => Promise<unknown>) {
  let runs = 0;
  return async (request: ControllerRequest<Widget>) => {
    const child = request.snapshots.of(configMaps).get(`${NS}/a-config`);
    seen.push({ at: cluster.time.now(), size: request.primary?.spec?.size, child: child?.metadata.resourceVersion });
    runs += 1;
    if (runs > 1) return undefined;
    await write(request);
    return requeueAfter(20);
  };
}

function run(reconciler: (request: ControllerRequest<Widget>) => Promise<unknown>, options: Partial<ControllerRunOptions> = {}, childSelector?: string): void {
  running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
    .owns(configMaps, childSelector === undefined ? {} : { labelSelector: childSelector })
    .run(reconciler as never, { scheduler: cluster.time, logger, readAfterWriteMetrics: (event) => void metrics.push(event), ...options })
    .subscribe((event) => events.push(event));
}

describe('read after write', () => {
  it('holds the reconcile right after a write to the primary until the cache shows it, then hands it that version', async () => {
    let written: Widget | undefined;
    run(
      firstRunWrites(async ({ primary, writes }) => {
        written = await writes.patch(widgets, primary!, { type: 'merge', patch: { metadata: { resourceVersion: primary!.metadata.resourceVersion }, spec: { size: 2 } } });
      }),
    );
    await cluster.runTo(1_000);

    // The third reconcile is the write's own event, which came while the second waited.
    expect(seen.map((s) => [s.at, s.size])).toEqual([
      [100, 1],
      [205, 2],
      [205, 2],
    ]);
    expect(written?.spec?.size).toBe(2);
    expect(metrics).toEqual([{ type: 'caughtUp', key: `${NS}/a`, waitedSeconds: 0.075 }]);
    expect(events.filter((event) => event.type === 'staleCache')).toEqual([]);
  });

  it('waits for its write to a child the same way', async () => {
    let created: ConfigMap | undefined;
    run(
      firstRunWrites(async ({ writes }) => {
        created = await writes.create(configMaps, { metadata: { name: 'a-config', namespace: NS }, data: { size: '1' } });
      }),
    );
    await cluster.runTo(1_000);
    expect(seen.map((s) => [s.at, s.child])).toEqual([
      [100, undefined],
      [205, created?.metadata.resourceVersion],
    ]);
  });

  it('finds its write among the changes of a batch that ends with someone else’s, comparing versions for equality', async () => {
    let created: ConfigMap | undefined;
    // Someone else's write lands in the same instant as ours, after it: one batch, ours not last.
    cluster.afterWrite = () => cluster.store.create(configMaps, { metadata: { name: 'other', namespace: NS } });
    run(
      firstRunWrites(async ({ writes }) => {
        created = await writes.create(configMaps, { metadata: { name: 'a-config', namespace: NS } });
      }),
      { resourceVersionOrder: 'opaque' },
    );
    await cluster.runTo(1_000);
    expect(seen.map((s) => [s.at, s.child])).toEqual([
      [100, undefined],
      [205, created?.metadata.resourceVersion],
    ]);
  });

  it('waits for an object it deleted to leave the cache', async () => {
    cluster.store.create(configMaps, { metadata: { name: 'a-config', namespace: NS } });
    run(
      firstRunWrites(async ({ writes }) => {
        await writes.delete(configMaps, { namespace: NS, name: 'a-config' });
      }),
    );
    await cluster.runTo(1_000);
    expect(seen.map((s) => [s.at, s.child === undefined])).toEqual([
      [100, false],
      [205, true],
    ]);
  });

  it('records a write made with another client through writes.wrote()', async () => {
    run(
      firstRunWrites(async ({ writes }) => {
        const current = cluster.store.get(widgets, NS, 'a')!;
        writes.wrote(widgets, cluster.store.update(widgets, { ...current, spec: { size: 5 } }));
      }),
    );
    await cluster.runTo(1_000);
    // Written at 100 (the store directly), its event at 200; the next reconcile at 120 waits for it.
    expect(seen.map((s) => [s.at, s.size])).toEqual([
      [100, 1],
      [200, 5],
      [200, 5],
    ]);
  });

  it('goes ahead readAfterWriteTimeout after the write, reading the stale copy, and says so: an event, a metric, a warning', async () => {
    cluster.watchLatency = 1_000;
    let written: Widget | undefined;
    run(
      firstRunWrites(async ({ primary, writes }) => {
        written = await writes.patch(widgets, primary!, { type: 'merge', patch: { spec: { size: 2 } } });
      }),
      { readAfterWriteTimeout: 300 },
    );
    await cluster.runTo(3_000);
    // Synced at 1 000; written and answered at 1 010; the reconcile at 1 030 gives up at 1 310,
    // long before the write's event, which comes at 2 005 and is reconciled then.
    expect(seen.map((s) => [s.at, s.size])).toEqual([
      [1_000, 1],
      [1_310, 1],
      [2_005, 2],
    ]);
    expect(events.filter((event) => event.type === 'staleCache')).toEqual([
      { type: 'staleCache', key: `${NS}/a`, waited: 280, unseen: [{ informer: 'widgets@?', key: `${NS}/a`, resourceVersion: written?.metadata.resourceVersion }] },
    ]);
    expect(metrics).toEqual([{ type: 'gaveUp', key: `${NS}/a`, waitedSeconds: 0.28, unseen: 1 }]);
    expect(warnings).toEqual(['reconcile goes ahead with a cache that has not shown its own writes']);
  });

  it('does not wait for a write its informer will never show: an object outside the label selector', async () => {
    run(
      firstRunWrites(async ({ writes }) => {
        await writes.create(configMaps, { metadata: { name: 'unlabelled', namespace: NS } });
      }),
      { readAfterWriteTimeout: 60_000 },
      'managed=yes',
    );
    await cluster.runTo(1_000);
    expect(seen.map((s) => s.at)).toEqual([100, 130]);
    expect(metrics).toEqual([]);
  });
});

/**
 * A stop with the run's `signal` completes the run once nothing of a reconcile runs: one that
 * waited for the cache is then the reconciler's own work, a Promise waited for and an Observable
 * unsubscribed, as without a wait.
 */
describe('read after write: stopped by the run’s signal', () => {
  /** The reconcile of `ns/a` after its first run's write (at 205, once the cache shows it) returns `second()`. */
  function secondRunAfterAWait(second: () => Promise<undefined> | Observable<undefined>, signal: AbortSignal): { completedAt(): number | undefined } {
    let completedAt: number | undefined;
    let runs = 0;
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(
        ({ primary, writes }) => {
          seen.push({ at: cluster.time.now(), size: primary?.spec?.size, child: undefined });
          runs += 1;
          if (runs > 1) return second();
          return writes.patch(widgets, primary!, { type: 'merge', patch: { spec: { size: 2 } } }).then(() => requeueAfter(20));
        },
        { scheduler: cluster.time, logger, signal },
      )
      .subscribe({ complete: () => (completedAt = cluster.time.now()) });
    return { completedAt: () => completedAt };
  }

  it('waits for a Promise reconcile that ran after a wait: the run completes once it settles, not before', async () => {
    let release: () => void = () => undefined;
    const stop = new AbortController();
    const stopped = secondRunAfterAWait(() => new Promise((resolve) => (release = () => resolve(undefined))), stop.signal);
    await cluster.runTo(300);
    expect(seen.map((s) => [s.at, s.size])).toEqual([
      [100, 1],
      [205, 2],
    ]);
    stop.abort();
    await cluster.runTo(1_000);
    expect(stopped.completedAt()).toBeUndefined();
    release();
    await settlePromises();
    expect(stopped.completedAt()).toBe(1_000);
  });

  it('unsubscribes an Observable reconcile that ran after a wait, and completes at once', async () => {
    let tornDownAt: number | undefined;
    const stop = new AbortController();
    const stopped = secondRunAfterAWait(() => new Observable<undefined>(() => () => (tornDownAt = cluster.time.now())), stop.signal);
    await cluster.runTo(300);
    stop.abort();
    await settlePromises();
    expect([tornDownAt, stopped.completedAt()]).toEqual([300, 300]);
  });

  it('completes at once when stopped during the wait, without calling the reconciler', async () => {
    const stop = new AbortController();
    const stopped = secondRunAfterAWait(() => Promise.resolve(undefined), stop.signal);
    await cluster.runTo(150);
    stop.abort();
    await cluster.runTo(1_000);
    expect(seen.map((s) => s.at)).toEqual([100]);
    expect(stopped.completedAt()).toBe(150);
  });
});

describe('read after write: ordered resourceVersions (KEP-5504) and opaque ones', () => {
  /**
   * The write's event never reaches the cache: the watch breaks as it is delivered, another
   * writer changes the object, and the watch cache forgets, so the informer relists (after its
   * backoff, within a few seconds) and finds the other writer's version.
   */
  async function writeThenRelist(options: Partial<ControllerRunOptions>): Promise<void> {
    run(
      firstRunWrites(async ({ primary, writes }) => {
        cluster.watchFault = 'unreachable';
        await writes.patch(widgets, primary!, { type: 'merge', patch: { spec: { size: 2 } } });
        const current = cluster.store.get(widgets, NS, 'a')!;
        cluster.store.update(widgets, { ...current, spec: { size: 3 } });
        cluster.store.compact();
      }),
      { readAfterWriteTimeout: 60_000, ...options },
    );
    cluster.at(300, () => (cluster.watchFault = undefined));
    await cluster.runTo(120_000);
  }

  it('from a server that orders them (1.35 and later), takes a later version in the cache as having seen the write', async () => {
    cluster.serverMinor = '35';
    await writeThenRelist({});
    expect(cluster.requests.filter((request) => request === 'list widgets')).toHaveLength(2);
    // The relist's update of the object is reconciled once more, at once.
    expect(seen.map((s) => s.size)).toEqual([1, 3, 3]);
    expect(seen[1]!.at).toBeLessThan(10_000);
    expect(seen[2]!.at).toBe(seen[1]!.at);
  });

  it('from an older server (1.34), compares for equality: the write never shows, so it waits the whole bound', async () => {
    cluster.serverMinor = '34';
    await writeThenRelist({});
    expect(seen.map((s) => [s.at, s.size])).toEqual([
      [100, 1],
      [60_110, 3],
      [60_110, 3],
    ]);
  });

  it("with resourceVersionOrder: 'opaque', compares for equality whatever the server says", async () => {
    cluster.serverMinor = '36';
    await writeThenRelist({ resourceVersionOrder: 'opaque' });
    expect(seen.map((s) => s.at)).toEqual([100, 60_110, 60_110]);
  });
});
