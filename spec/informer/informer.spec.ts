import { TestScheduler } from 'rxjs/testing';
import type { Delta } from '../../lib/reflector/delta';
import type { Health } from '../../lib/reflector/health';
import { informerFrom, informerName } from '../../lib/informer/informer';
import { deployments, pods } from '../../lib/resources/builtins';
import type { Change } from '../../lib/store/change';
import { labelIndex } from '../../lib/store/indexers';
import type { KubeObject } from '../../lib/store/object';
import type { Snapshot } from '../../lib/store/snapshot';
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

  it('keeps events$ as the deprecated name of changes$: one stream, not a second watch', () => {
    const informer = informerFrom(fakeListerWatcher([pod('a', '1')]), { scheduler: virtual() });
    expect(informer.events$).toBe(informer.changes$);
  });

  it('passes the watch timeout range to every watch it opens', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual(), watchTimeoutSeconds: { min: 30, max: 31 } });
    const subscription = informer.informer$.subscribe();
    expect(lw.watches).toHaveLength(1);
    expect(lw.watches[0].timeoutSeconds).toBe(30);
    subscription.unsubscribe();
  });

  it('stops the watch when the last subscriber leaves, and a later subscription starts fresh', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const first = informer.informer$.subscribe();
    const second = informer.informer$.subscribe();
    first.unsubscribe();
    expect(lw.openWatches()).toBe(1);
    second.unsubscribe();
    expect(lw.openWatches()).toBe(0);

    lw.objects = [pod('b', '7')];
    const seen: Snapshot[] = [];
    const again = informer.informer$.subscribe((snapshot) => seen.push(snapshot));
    expect(lw.lists).toHaveLength(2);
    expect(seen.map((s) => [...s.keys()])).toEqual([['default/b']]);
    again.unsubscribe();
  });

  it('replays the latest snapshot to a late subscriber', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const running = informer.informer$.subscribe();
    lw.watch$().next({ type: 'ADDED', object: pod('b', '11') });
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
    const informer = informerFrom(lw, { scheduler: virtual() });
    const early: Change[] = [];
    const late: Change[] = [];
    const s1 = informer.changes$.subscribe((c) => early.push(c));
    const s2 = informer.changes$.subscribe((c) => late.push(c));
    lw.watch$().next({ type: 'MODIFIED', object: pod('a', '2') });
    expect(early.map((c) => `${c.type} ${c.key}${c.type === 'add' && c.isInInitialList ? ' initial' : ''}`)).toEqual(['add default/a initial', 'update default/a']);
    expect(late.map((c) => `${c.type} ${c.key}`)).toEqual(['update default/a']);
    const update = late[0];
    expect(update.type === 'update' && [update.oldObject.metadata.resourceVersion, update.object.metadata.resourceVersion]).toEqual(['1', '2']);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('keeps the cache whole when deltas$ starts the watch, and shares it with informer$', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const deltas: Delta[] = [];
    const raw = informer.deltas$.subscribe((d) => deltas.push(d));
    lw.watch$().next({ type: 'ADDED', object: pod('b', '11') });
    let snapshot: Snapshot | undefined;
    informer.informer$.subscribe((s) => (snapshot = s)).unsubscribe();
    expect(deltas.map((d) => d.type)).toEqual(['Replace', 'Added']);
    expect(snapshot?.size).toBe(2);
    expect(lw.watches).toHaveLength(1);
    raw.unsubscribe();
    expect(lw.openWatches()).toBe(0);
  });

  it('replays the latest health on health$ without starting the watch', () => {
    const lw = fakeListerWatcher([pod('a', '1')]);
    const informer = informerFrom(lw, { scheduler: virtual() });
    const phases: Health['phase'][] = [];
    const watching = informer.health$.subscribe((h) => phases.push(h.phase));
    expect(lw.lists).toHaveLength(0);
    expect(phases).toEqual(['idle']);
    const running = informer.informer$.subscribe();
    let latest: Health | undefined;
    informer.health$.subscribe((h) => (latest = h)).unsubscribe();
    expect(latest?.phase).toBe('watching');
    running.unsubscribe();
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
