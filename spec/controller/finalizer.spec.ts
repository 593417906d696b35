import { filter, Observable, type Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import type { KubeObject } from '../../lib/base/object';
import { controller, type ControllerEvent } from '../../lib/controller/controller';
import { finalizer, type FinalizerRequest } from '../../lib/controller/finalizer';
import { configMaps } from '../../lib/resources/builtins';
import { changedGeneration } from '../../lib/operators/changedGeneration';
import { requeueAfter } from '../../lib/workqueue/reconcileResult';
import { widgets, type Widget } from '../../apiserver/src';
import { Cluster, settlePromises } from './controllerHarness';

/**
 * finalizer(name, { apply, cleanup }) over a loopback store that deletes as the API server does
 * (apiserver/src/gracefulDeletion.ts): the finalizer is added before the first apply; a deletion
 * runs cleanup, and the finalizer goes only once cleanup has succeeded, so the object disappears
 * only then; every write of the finalizer carries the resourceVersion it was read at.
 */

const NS = 'shop';
const FINALIZER = 'example.com/cleanup';
let cluster: Cluster;
let running: Subscription | undefined;
let log: string[];
let events: ControllerEvent[];
/** When the run completed (virtual ms), if it has. */
let completedAt: number | undefined;

beforeEach(() => {
  cluster = new Cluster();
  running = undefined;
  log = [];
  events = [];
  completedAt = undefined;
});
afterEach(() => running?.unsubscribe());

function widget(name: string, finalizers?: string[]): Widget {
  return cluster.store.create(widgets, { metadata: { name, namespace: NS, ...(finalizers === undefined ? {} : { finalizers }) }, spec: { size: 1 } });
}

const describeObject = (object: KubeObject): string =>
  `${object.metadata.name} finalizers=${(object.metadata.finalizers ?? []).join(',') || '-'}${object.metadata.deletionTimestamp === undefined ? '' : ' deleting'}`;

function run(handlers: Partial<{ apply: (request: FinalizerRequest<Widget>) => unknown; cleanup: (request: FinalizerRequest<Widget>) => unknown }> = {}, signal?: AbortSignal): void {
  // Generation changes only: the finalizer's own writes reconcile nothing, a deletion does (it bumps the generation).
  running = controller({ factory: cluster.factory, client: cluster.client }, widgets, { predicates: [changedGeneration()] })
    .owns(configMaps)
    .run(
      finalizer<Widget>(FINALIZER, {
        apply: (request) => {
          log.push(`${cluster.time.now()} apply ${describeObject(request.primary)}`);
          return handlers.apply?.(request) as undefined;
        },
        cleanup: (request) => {
          log.push(`${cluster.time.now()} cleanup ${describeObject(request.primary)}`);
          return handlers.cleanup?.(request) as undefined;
        },
      }),
      { scheduler: cluster.time, logger: silentLogger, signal },
    )
    .pipe(filter((event) => event.type !== 'queue'))
    .subscribe({ next: (event) => events.push(event), complete: () => (completedAt = cluster.time.now()) });
}

/** A Promise the spec settles by hand. */
function held(): { readonly promise: Promise<undefined>; resolve(): void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<undefined>((settle) => (resolve = () => settle(undefined)));
  return { promise, resolve };
}

describe('finalizer()', () => {
  it('adds the finalizer, with the resourceVersion it read as a precondition, before the first apply, which sees it', async () => {
    cluster.writeLatency = 10;
    widget('a');
    run();
    await cluster.runTo(1_000);
    expect(cluster.writes).toEqual([`patch widgets ${NS}/a`]);
    expect(log).toEqual([`10 apply a finalizers=${FINALIZER}`]);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual([FINALIZER]);
  });

  it('keeps the finalizers others put there, and writes nothing when its own is there already', async () => {
    widget('a', ['example.com/other']);
    widget('b', [FINALIZER]);
    run();
    await cluster.runTo(1_000);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual(['example.com/other', FINALIZER]);
    expect(cluster.writes).toEqual([`patch widgets ${NS}/a`]);
    expect(log.sort()).toEqual([`0 apply a finalizers=example.com/other,${FINALIZER}`, `0 apply b finalizers=${FINALIZER}`]);
  });

  it('on deletion runs cleanup once, then removes the finalizer, and only then does the object go', async () => {
    cluster.watchLatency = 100;
    cluster.writeLatency = 10;
    widget('a', [FINALIZER]);
    run({
      // Cleanup takes 50 ms; meanwhile the object must still be there.
      cleanup: () => new Promise((resolve) => cluster.time.schedule(() => resolve(undefined), 50)),
    });
    cluster.at(200, () => void cluster.store.delete(widgets, NS, 'a'));
    cluster.at(320, () => log.push(`320 stored: ${cluster.store.get(widgets, NS, 'a') === undefined ? 'gone' : describeObject(cluster.store.get(widgets, NS, 'a')!)}`));
    // Marked at 200 (its event at 300), cleaned up from 300 to 350, the finalizer removed at 355
    // (answered at 360), the DELETED event at 455. A child created at 340 reaches the cache at
    // 440: the reconcile it causes must not read the widget from before and clean up again.
    cluster.at(340, () => cluster.store.create(configMaps, { metadata: { name: 'late', namespace: NS, ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'a', uid: 'x', controller: true }] } }));
    await cluster.runTo(2_000);

    expect(log).toEqual([
      `100 apply a finalizers=${FINALIZER}`,
      `300 cleanup a finalizers=${FINALIZER} deleting`,
      `320 stored: a finalizers=${FINALIZER} deleting`,
    ]);
    expect(cluster.store.get(widgets, NS, 'a')).toBeUndefined();
    expect(cluster.writes).toEqual([`patch widgets ${NS}/a`]);
    expect(events.filter((event) => event.type === 'staleCache')).toEqual([]);
  });

  it('keeps the finalizer while cleanup fails, retrying with backoff, and removes it once cleanup succeeds', async () => {
    widget('a', [FINALIZER]);
    let failures = 2;
    run({
      cleanup: () => {
        if (failures-- > 0) throw new Error('the bucket is still there');
      },
    });
    cluster.at(100, () => void cluster.store.delete(widgets, NS, 'a'));
    cluster.at(110, () => log.push(`110 stored: ${describeObject(cluster.store.get(widgets, NS, 'a')!)}`));
    await cluster.runTo(1_000);
    expect(log).toEqual([
      `0 apply a finalizers=${FINALIZER}`,
      `100 cleanup a finalizers=${FINALIZER} deleting`,
      `105 cleanup a finalizers=${FINALIZER} deleting`,
      `110 stored: a finalizers=${FINALIZER} deleting`,
      `115 cleanup a finalizers=${FINALIZER} deleting`,
    ]);
    expect(events.map((event) => event.type)).toEqual(['reconciled', 'failed', 'failed', 'reconciled', 'reconciled']);
    expect(cluster.store.get(widgets, NS, 'a')).toBeUndefined();
  });

  it('keeps the finalizer when cleanup asks to come back later, and runs it again then', async () => {
    widget('a', [FINALIZER]);
    let waits = 1;
    run({ cleanup: () => (waits-- > 0 ? requeueAfter(500) : undefined) });
    cluster.at(100, () => void cluster.store.delete(widgets, NS, 'a'));
    await cluster.runTo(400);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual([FINALIZER]);
    await cluster.runTo(1_000);
    expect(log.filter((line) => line.split(' ')[1] === 'cleanup').map((line) => line.split(' ')[0])).toEqual(['100', '600']);
    expect(cluster.store.get(widgets, NS, 'a')).toBeUndefined();
  });

  it('leaves an object being deleted alone when its finalizer is not there: no cleanup, no write', async () => {
    widget('a', ['example.com/other']);
    cluster.store.delete(widgets, NS, 'a');
    run();
    await cluster.runTo(1_000);
    expect([log, cluster.writes]).toEqual([[], []]);
  });

  it('retries a finalizer write that lost a race (409 Conflict) after backoff, against the newer version', async () => {
    cluster.writeLatency = 10;
    widget('a');
    // Someone else writes the widget while the finalizer's patch is on its way.
    cluster.at(2, () => {
      const current = cluster.store.get(widgets, NS, 'a')!;
      cluster.store.update(widgets, { ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } });
    });
    run();
    await cluster.runTo(1_000);
    const failed = events.find((event) => event.type === 'failed');
    expect(failed).toMatchObject({ type: 'failed', error: { code: 409, reason: 'Conflict' } });
    expect(cluster.writes).toEqual([`patch widgets ${NS}/a`, `patch widgets ${NS}/a`]);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata).toMatchObject({ finalizers: [FINALIZER], labels: { touched: 'yes' } });
    expect(log).toEqual([`25 apply a finalizers=${FINALIZER}`]);
  });

  it('calls nothing for a key whose object is gone', async () => {
    widget('a', [FINALIZER]);
    run();
    await cluster.runTo(10);
    cluster.store.update(widgets, { ...cluster.store.get(widgets, NS, 'a')!, metadata: { ...cluster.store.get(widgets, NS, 'a')!.metadata, finalizers: [] } });
    cluster.store.delete(widgets, NS, 'a');
    await cluster.runTo(1_000);
    expect(log).toEqual([`0 apply a finalizers=${FINALIZER}`]);
  });
});

/**
 * A stop with the run's `signal` completes the run once nothing of a reconcile runs (what
 * `whileLeader` waits for before the Lease goes): a handler's Promise is waited for, as a
 * Promise reconciler's is; a handler's Observable is unsubscribed, as an Observable reconciler is.
 */
describe('finalizer() stopped by the run’s signal', () => {
  it('waits for apply’s Promise after adding the finalizer: the run completes once it settles, not before', async () => {
    cluster.writeLatency = 10;
    widget('a');
    const applying = held();
    const stop = new AbortController();
    run({ apply: () => applying.promise }, stop.signal);
    await cluster.runTo(100);
    expect(log).toEqual([`10 apply a finalizers=${FINALIZER}`]);
    stop.abort();
    await cluster.runTo(1_000);
    expect(completedAt).toBeUndefined();
    applying.resolve();
    await settlePromises();
    expect(completedAt).toBe(1_000);
  });

  it('waits for cleanup’s Promise, and removes no finalizer after the stop (the next run cleans up again)', async () => {
    widget('a', [FINALIZER]);
    const cleaning = held();
    const stop = new AbortController();
    run({ cleanup: () => cleaning.promise }, stop.signal);
    cluster.at(100, () => void cluster.store.delete(widgets, NS, 'a'));
    await cluster.runTo(150);
    expect(log).toEqual([`0 apply a finalizers=${FINALIZER}`, `100 cleanup a finalizers=${FINALIZER} deleting`]);
    stop.abort();
    await cluster.runTo(1_000);
    expect(completedAt).toBeUndefined();
    cleaning.resolve();
    await settlePromises();
    expect(completedAt).toBe(1_000);
    expect(cluster.writes).toEqual([]);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual([FINALIZER]);
  });

  it('unsubscribes apply’s Observable after adding the finalizer, and completes at once', async () => {
    cluster.writeLatency = 10;
    widget('a');
    let tornDownAt: number | undefined;
    const stop = new AbortController();
    run({ apply: () => new Observable(() => () => (tornDownAt = cluster.time.now())) }, stop.signal);
    await cluster.runTo(100);
    expect(log).toEqual([`10 apply a finalizers=${FINALIZER}`]);
    stop.abort();
    await settlePromises();
    expect([tornDownAt, completedAt]).toEqual([100, 100]);
  });

  it('unsubscribes cleanup’s Observable, and completes at once without removing the finalizer', async () => {
    widget('a', [FINALIZER]);
    let tornDownAt: number | undefined;
    const stop = new AbortController();
    run({ cleanup: () => new Observable(() => () => (tornDownAt = cluster.time.now())) }, stop.signal);
    cluster.at(100, () => void cluster.store.delete(widgets, NS, 'a'));
    await cluster.runTo(150);
    stop.abort();
    await settlePromises();
    expect([tornDownAt, completedAt]).toEqual([150, 150]);
    await cluster.runTo(1_000);
    expect(cluster.writes).toEqual([]);
    expect(cluster.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual([FINALIZER]);
  });
});
