import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import type { Health, InformerHealth } from '../../lib/reflector/health';
import { informerFrom, informerName } from '../../lib/informer/informer';
import { waitForSync } from '../../lib/informer/waitForSync';
import { silentLogger, type Logger } from '../../lib/base/logger';
import { RejectedObjectError, StatusError } from '../../lib/base/errors';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import { deployments, pods } from '../../lib/resources/builtins';
import type { Change } from '../../lib/store/change';
import { labelIndex } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { settledSnapshot } from '../../lib/store/indexedSnapshot';
import { within } from '../support/eventually';
import { fakeListerWatcher, pod } from './informerFixtures';

/** A scheduler for timers that never fire unless a test flushes it: no real timers left behind. */
const virtual = (): TestScheduler => new TestScheduler((a, b) => expect(a).toEqual(b));

describe('informerFrom', () => {
  it('rides one list and one watch for informer$, deltas$, changes$ and synced$', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const subscriptions = [informer.informer$.subscribe(), informer.deltas$.subscribe(), informer.changes$.subscribe(), informer.synced$.subscribe()];
    expect(lw.lists).toHaveLength(1);
    expect(lw.watches).toHaveLength(1);
    expect(lw.openWatches()).toBe(1);
    subscriptions.forEach((s) => s.unsubscribe());
  });

  it('passes the watch timeout range to every watch it opens', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual(), watchTimeoutSeconds: { min: 30, max: 31 } });
    const subscription = informer.informer$.subscribe();
    expect(lw.watches).toHaveLength(1);
    expect(lw.watches[0].timeoutSeconds).toBe(30);
    subscription.unsubscribe();
  });

  it('stops the watch when the current task ends after the last subscriber leaves, and a later subscription starts fresh', () => {
    const scheduler = virtual();
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler });
    const first = informer.informer$.subscribe();
    const second = informer.informer$.subscribe();
    first.unsubscribe();
    second.unsubscribe();
    expect(lw.openWatches()).toBe(1);
    scheduler.flush(); // the 0 ms grace timer
    expect(lw.openWatches()).toBe(0);

    lw.objects = [pod('b', '7')];
    const seen: Snapshot[] = [];
    const again = informer.informer$.subscribe((snapshot) => seen.push(snapshot));
    expect(lw.lists).toHaveLength(2);
    expect(seen.map((s) => [...s.keys()])).toEqual([['default/b']]);
    again.unsubscribe();
  });

  describe('the grace period after the last subscriber leaves', () => {
    it('keeps the watch and the cache for gracePeriodMs, for whoever comes back within it, then stops them', () => {
      const scheduler = virtual();
      const lw = fakeListerWatcher([pod('a', '1')]);
      scheduler.maxFrames = 20_000;
      const informer = informerFrom(lw, { scheduler, gracePeriodMs: 5_000 });
      const opened: string[] = [];
      informer.informer$.subscribe().unsubscribe(); // left at 0 ms: the watch runs until 5 000
      scheduler.schedule(() => {
        opened.push(`4999: ${lw.openWatches()}`);
        const back = informer.informer$.subscribe((snapshot) => opened.push(`back with ${snapshot.size}`));
        scheduler.schedule(() => back.unsubscribe(), 1); // left at 5 000: runs until 10 000
      }, 4_999);
      scheduler.schedule(() => opened.push(`9999: ${lw.openWatches()}`), 9_999);
      scheduler.schedule(() => opened.push(`10001: ${lw.openWatches()}`), 10_001);
      scheduler.flush();
      expect(opened).toEqual(['4999: 1', 'back with 1', '9999: 1', '10001: 0']);
      expect(lw.lists).toHaveLength(1);
    });

    it('keeps the watch when everyone leaves and someone subscribes again in the same tick (default grace)', () => {
      const scheduler = virtual();
      const lw = fakeListerWatcher([pod('a', '1')]);
      const informer = informerFrom(lw, { scheduler });
      informer.informer$.subscribe().unsubscribe();
      const again = informer.handle({}).subscribe();
      scheduler.flush();
      expect(lw.lists).toHaveLength(1);
      expect(lw.openWatches()).toBe(1);
      again.unsubscribe();
      scheduler.flush();
      expect(lw.openWatches()).toBe(0);
    });

    it('keeps the cache that waitForSync listed for the subscriber that comes right after it', async () => {
      const scheduler = virtual();
      const lw = fakeListerWatcher([pod('a', '1')]);
      const informer = informerFrom(lw, { scheduler });
      const [synced] = await within(waitForSync([informer], { scheduler }), 5_000, 'the informer to sync');
      let replayed: Snapshot | undefined;
      const running = informer.informer$.subscribe((snapshot) => (replayed ??= snapshot));
      scheduler.flush();
      // The same state, settled: without the changes that produced it.
      expect(replayed).toBe(settledSnapshot(synced!));
      expect({ size: replayed?.size, changes: replayed?.changes, resourceVersion: replayed?.resourceVersion }).toEqual({ size: 1, changes: [], resourceVersion: synced!.resourceVersion });
      expect(lw.lists).toHaveLength(1);
      running.unsubscribe();
    });

    it('is a number of ms in range, checked when the informer is made', () => {
      expect(() => informerFrom(fakeListerWatcher(), { gracePeriodMs: -1 })).toThrow(RangeError);
      expect(() => informerFrom(fakeListerWatcher(), { gracePeriodMs: Number.NaN })).toThrow(/gracePeriodMs/);
    });
  });

  it('replays the latest snapshot to a late subscriber', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const scheduler = virtual();
    const informer = informerFrom(lw, { scheduler });
    const running = informer.informer$.subscribe();
    lw.watch$().next({ type: 'ADDED', object: pod('b', '11') });
    scheduler.flush(); // the end of the task closes the batch
    let latest: Snapshot | undefined;
    informer.informer$.subscribe((snapshot) => (latest = snapshot)).unsubscribe();
    expect(latest?.size).toBe(2);
    expect(lw.lists).toHaveLength(1);
    running.unsubscribe();
  });

  it('emits the first synced snapshot on synced$, once', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const running = informer.informer$.subscribe();
    const synced: Snapshot[] = [];
    let completed = false;
    informer.synced$.subscribe({ next: (s) => synced.push(s), complete: () => (completed = true) });
    lw.watch$().next({ type: 'ADDED', object: pod('b', '11') });
    expect(synced).toHaveLength(1);
    expect(synced[0].synced).toBe(true);
    expect(completed).toBe(true);
    running.unsubscribe();
  });

  it('gives changes$ the initial list as adds, and a late subscriber only the changes after it joined', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const scheduler = virtual();
    const informer = informerFrom(lw, { scheduler });
    const early: Change[] = [];
    const late: Change[] = [];
    const s1 = informer.changes$.subscribe((c) => early.push(c));
    const s2 = informer.changes$.subscribe((c) => late.push(c));
    lw.watch$().next({ type: 'MODIFIED', object: pod('a', '2') });
    scheduler.flush(); // the end of the task closes the batch
    expect(early.map((c) => `${c.type} ${c.key}${c.type === 'add' && c.isInInitialList ? ' initial' : ''}`)).toEqual(['add default/a initial', 'update default/a']);
    expect(late.map((c) => `${c.type} ${c.key}`)).toEqual(['update default/a']);
    const update = late[0];
    expect(update.type === 'update' && [update.oldObject.metadata.resourceVersion, update.object.metadata.resourceVersion]).toEqual(['1', '2']);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('applies the watch events of one task as one snapshot, while deltas$, changes$ and handlers get one item per event, in order', async () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw); // no scheduler: a microtask closes the batch
    const snapshots: Snapshot[] = [];
    const deltas: string[] = [];
    const changes: string[] = [];
    const handled: string[] = [];
    const subscriptions = [
      informer.deltas$.subscribe((d) => deltas.push(d.type === 'Bookmark' ? d.type : `${d.type} ${d.type === 'Replace' ? '' : d.object.metadata.resourceVersion}`)),
      informer.changes$.subscribe((c) => changes.push(`${c.type} ${c.key}@${c.object.metadata.resourceVersion}`)),
      informer.informer$.subscribe((s) => snapshots.push(s)),
      informer.handle({ onAdd: (o) => void handled.push(`add ${o.metadata.name}`), onUpdate: (_, o) => void handled.push(`update ${o.metadata.name}@${o.metadata.resourceVersion}`), onDelete: (o) => void handled.push(`delete ${o.metadata.name}`) }).subscribe(),
    ];
    lw.watch$().next({ type: 'MODIFIED', object: pod('a', '2') });
    lw.watch$().next({ type: 'ADDED', object: pod('b', '3') });
    lw.watch$().next({ type: 'DELETED', object: pod('b', '4') });
    expect(deltas).toEqual(['Replace ', 'Updated 2', 'Added 3', 'Deleted 4']); // at once, one per event
    expect(snapshots).toHaveLength(1);
    await Promise.resolve();
    await Promise.resolve();
    expect(snapshots).toHaveLength(2);
    expect(snapshots[1]!.changes.map((c) => `${c.type} ${c.key}`)).toEqual(['update default/a', 'add default/b', 'delete default/b']);
    expect(changes).toEqual(['update default/a@2', 'add default/b@3', 'delete default/b@4']); // joined after the list
    await new Promise((resolve) => setImmediate(resolve));
    // b came and went within one snapshot: the handler's queue coalesces it away, as it does for a handler behind.
    expect(handled).toEqual(['add a', 'update a@2']);
    subscriptions.forEach((s) => s.unsubscribe());
  });

  it('batches on the scheduler it is given as it does by default: the events of one instant of virtual time make one snapshot', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const scheduler = virtual();
    const informer = informerFrom(lw, { scheduler });
    const snapshots: Snapshot[] = [];
    const running = informer.informer$.subscribe((s) => snapshots.push(s));
    scheduler.schedule(() => {
      lw.watch$().next({ type: 'MODIFIED', object: pod('a', '2') });
      lw.watch$().next({ type: 'ADDED', object: pod('b', '3') });
      expect(snapshots).toHaveLength(1); // the batch is open until the end of the instant
    }, 5);
    scheduler.schedule(() => lw.watch$().next({ type: 'DELETED', object: pod('b', '4') }), 10);
    scheduler.flush();
    expect(snapshots.map((s) => s.changes.map((c) => `${c.type} ${c.key}`))).toEqual([['add default/a'], ['update default/a', 'add default/b'], ['delete default/b']]);
    expect(snapshots.map((s) => s.resourceVersion).slice(1)).toEqual(['3', '4']);
    running.unsubscribe();
  });

  it('keeps the cache whole when deltas$ starts the watch, and shares it with informer$', () => {
    const scheduler = virtual();
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler });
    const deltas: Delta[] = [];
    const raw = informer.deltas$.subscribe((d) => deltas.push(d));
    lw.watch$().next({ type: 'ADDED', object: pod('b', '11') });
    expect(deltas.map((d) => d.type)).toEqual(['Replace', 'Added']); // deltas$ does not wait for the batch
    scheduler.flush(); // the end of the task closes the batch
    let snapshot: Snapshot | undefined;
    informer.informer$.subscribe((s) => (snapshot = s)).unsubscribe();
    expect(snapshot?.size).toBe(2);
    expect(lw.watches).toHaveLength(1);
    raw.unsubscribe();
    scheduler.flush();
    expect(lw.openWatches()).toBe(0);
  });

  it('replays the latest health on health$ without starting the watch', () => {
    const scheduler = virtual();
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler });
    const phases: Health['phase'][] = [];
    const watching = informer.health$.subscribe((h) => phases.push(h.phase));
    expect(lw.lists).toHaveLength(0);
    expect(phases).toEqual(['idle']);
    const running = informer.informer$.subscribe();
    let latest: Health | undefined;
    informer.health$.subscribe((h) => (latest = h)).unsubscribe();
    expect(latest?.phase).toBe('watching');
    running.unsubscribe();
    scheduler.flush();
    expect(phases[phases.length - 1]).toBe('idle');
    watching.unsubscribe();
  });

  it('applies indexers and transform to the cache', () => {
    const lw = fakeListerWatcher([{ metadata: { name: 'a', namespace: 'n', resourceVersion: '1', labels: { app: 'web' }, managedFields: [{}] } }]);
    const informer = informerFrom(lw, {
      scheduler: virtual(),
      indexers: { app: labelIndex('app') },
      transform: (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
    });
    let snapshot: Snapshot | undefined;
    const running = informer.informer$.subscribe((s) => (snapshot = s));
    expect(snapshot?.byIndex('app', 'web').map((o) => o.metadata.managedFields)).toEqual([undefined]);
    running.unsubscribe();
  });

  describe('what it cannot cache, and what fails', () => {
    type ConfigMap = KubeObject & { data?: Record<string, string> };
    const configMap = (name: string, resourceVersion: string, data?: Record<string, string>): ConfigMap => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: 'default', resourceVersion },
      ...(data ? { data } : {}),
    });
    /** The transform a user writes first: it assumes every ConfigMap has data. */
    const dataKeys = (object: ConfigMap): ConfigMap => ({ ...object, data: Object.fromEntries(Object.keys(object.data!).map((k) => [k, ''])) });
    const recordingLogger = (): Logger & { readonly errors: [Record<string, unknown>, string][] } => {
      const errors: [Record<string, unknown>, string][] = [];
      return { errors, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (fields, message) => void errors.push([fields, message]) };
    };

    it('leaves out an object its transform throws on, counts it on health$, logs it, and goes on: informer$, handlers and synced$ live', () => {
      const scheduler = virtual();
      const lw = fakeListerWatcher([configMap('a', '1', { x: '1' }), configMap('no-data', '2')]);
      const logger = recordingLogger();
      const informer = informerFrom<ConfigMap>(lw as unknown as ListerWatcher<ConfigMap>, { scheduler, name: 'configmaps', transform: dataKeys, logger });
      let failure: unknown;
      let latest: Snapshot<ConfigMap> | undefined;
      const added: string[] = [];
      const running = informer.informer$.subscribe({ next: (s) => (latest = s), error: (e: unknown) => (failure = e) });
      const handler = informer.handle({ onAdd: (o) => void added.push(o.metadata.name) }).subscribe({ error: (e: unknown) => (failure = e) });
      let synced: Snapshot<ConfigMap> | undefined;
      informer.synced$.subscribe((s) => (synced = s));
      lw.watch$().next({ type: 'ADDED', object: configMap('b', '3', { y: '2' }) });
      scheduler.flush();

      expect(failure).toBeUndefined();
      expect([...(latest?.keys() ?? [])].sort()).toEqual(['default/a', 'default/b']);
      expect(synced?.size).toBe(1);
      expect(added).toEqual(['a', 'b']);
      let health: InformerHealth | undefined;
      informer.health$.subscribe((h) => (health = h)).unsubscribe();
      expect(health?.rejectedObjects).toBe(1);
      expect(health?.lastRejection).toBeInstanceOf(RejectedObjectError);
      expect(health?.lastRejection).toMatchObject({ informer: 'configmaps', key: 'default/no-data', stage: 'transform', outcome: 'left-out' });
      expect(health?.lastRejection?.message).toMatch(/^configmaps: cannot cache default\/no-data: the transform failed: TypeError: /);
      expect(logger.errors).toHaveLength(1);
      expect(logger.errors[0]).toEqual([expect.objectContaining({ informer: 'configmaps', key: 'default/no-data', stage: 'transform', err: health?.lastRejection }), 'object not cached']);
      running.unsubscribe();
      handler.unsubscribe();
    });

    it('names itself in the errors health$ reports, and leaves the thrown error as it was', () => {
      const scheduler = virtual();
      const lw = fakeListerWatcher();
      const forbidden = new StatusError({ kind: 'Status', apiVersion: 'v1', code: 403, reason: 'Forbidden', message: 'pods is forbidden' }, undefined, 'GET /api/v1/pods');
      lw.listError = forbidden;
      const informer = informerFrom(lw, { scheduler, name: 'pods', logger: silentLogger });
      const errors: (Error | undefined)[] = [];
      informer.health$.subscribe((h) => errors.push(h.lastError));
      const running = informer.informer$.subscribe();
      const reported = errors[errors.length - 1];
      expect(reported).toBeInstanceOf(StatusError);
      expect(reported).toMatchObject({ code: 403, informer: 'pods', request: 'GET /api/v1/pods' });
      expect(reported?.message).toBe('pods: 403 Forbidden on GET /api/v1/pods: pods is forbidden');
      expect(forbidden.message).toBe('403 Forbidden on GET /api/v1/pods: pods is forbidden');
      expect(forbidden.informer).toBeUndefined();
      running.unsubscribe();
    });
  });

  it('adds handlers with the informer’s default resync period', () => {
    const scheduler = virtual();
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler, resyncPeriod: 1000 });
    const calls: string[] = [];
    const handler = informer
      .handle({ onAdd: (o) => void calls.push(`add ${o.metadata.name}`), onUpdate: (_o, o, { isResync }) => void calls.push(`update ${o.metadata.name} ${isResync}`) })
      .subscribe();
    scheduler.schedule(() => handler.unsubscribe(), 1500);
    scheduler.maxFrames = 2000;
    scheduler.flush();
    expect(calls).toEqual(['add a', 'update a true']);
    expect(lw.openWatches()).toBe(0);
  });
});

describe('informerName', () => {
  it('names an informer after its resource and scope', () => {
    expect(informerName(pods, {})).toBe('pods');
    expect(informerName(deployments, { namespace: 'prod' })).toBe('deployments.apps@prod');
    expect(informerName(pods, { namespace: 'default', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' })).toBe('pods@default?app=web&spec.nodeName=n1');
  });
});
