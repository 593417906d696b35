import type { Change, KubeObject, Pod } from '../../lib';
import { CLUSTER_SCOPED, DemoStats, describeChange, EventRate, NO_PHASE, ObjectCounts, phaseOf, RecentEvents } from '../../demo/stats';

type Phase = NonNullable<NonNullable<Pod['status']>['phase']>;
const pod = (namespace: string, name: string, phase: Phase | undefined, resourceVersion = '1'): Pod => ({
  metadata: { namespace, name, resourceVersion },
  ...(phase === undefined ? {} : { status: { phase } }),
});
const key = (object: KubeObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
const add = (object: KubeObject, isInInitialList = false): Change => ({ type: 'add', key: key(object), object, isInInitialList });
const update = (oldObject: KubeObject, object: KubeObject): Change => ({ type: 'update', key: key(object), oldObject, object });
const remove = (object: KubeObject, finalStateUnknown = false): Change => ({ type: 'delete', key: key(object), object, finalStateUnknown });

const table = (counts: ObjectCounts): Record<string, Record<string, number>> =>
  Object.fromEntries(counts.byNamespace().map((row) => [row.namespace, { total: row.total, ...Object.fromEntries(row.byPhase) }]));

describe('phaseOf', () => {
  it('reads status.phase, and NO_PHASE for objects without one', () => {
    expect(phaseOf(pod('a', 'x', 'Running'))).toBe('Running');
    expect(phaseOf(pod('a', 'x', undefined))).toBe(NO_PHASE);
    expect(phaseOf({ metadata: { name: 'cm' }, status: { phase: 42 } } as KubeObject)).toBe(NO_PHASE);
  });
});

describe('ObjectCounts', () => {
  it('counts adds by namespace and phase, largest namespace first', () => {
    const counts = new ObjectCounts();
    for (const change of [add(pod('a', '1', 'Running')), add(pod('b', '1', 'Running')), add(pod('b', '2', 'Pending')), add({ metadata: { name: 'node-1' } })]) counts.apply(change);
    expect(counts.total).toBe(4);
    expect(counts.byNamespace().map((row) => row.namespace)).toEqual(['b', CLUSTER_SCOPED, 'a']);
    expect(table(counts)).toEqual({ a: { total: 1, Running: 1 }, b: { total: 2, Running: 1, Pending: 1 }, [CLUSTER_SCOPED]: { total: 1, [NO_PHASE]: 1 } });
    expect(Object.fromEntries(counts.byPhase())).toEqual({ Running: 2, Pending: 1, [NO_PHASE]: 1 });
  });

  it('moves an object between phases on update and forgets phases and namespaces that become empty', () => {
    const counts = new ObjectCounts();
    const pending = pod('a', '1', 'Pending', '1');
    const running = pod('a', '1', 'Running', '2');
    counts.apply(add(pending));
    counts.apply(update(pending, running));
    expect(table(counts)).toEqual({ a: { total: 1, Running: 1 } });
    expect([...counts.byPhase().keys()]).toEqual(['Running']);
    counts.apply(remove(running));
    expect(counts.total).toBe(0);
    expect(counts.byNamespace()).toEqual([]);
    expect(counts.byPhase().size).toBe(0);
  });

  it('leaves the counts alone on an update that keeps namespace and phase', () => {
    const counts = new ObjectCounts();
    counts.apply(add(pod('a', '1', 'Running', '1')));
    counts.apply(update(pod('a', '1', 'Running', '1'), pod('a', '1', 'Running', '2')));
    expect(table(counts)).toEqual({ a: { total: 1, Running: 1 } });
  });
});

describe('EventRate', () => {
  it('averages over the time since the start until the window is full, then over the window', () => {
    const rate = new EventRate(10_000, { windowMs: 5000, bucketMs: 250 });
    rate.record(10_500, 10);
    rate.record(11_900, 10);
    expect(rate.perSecond(12_000)).toBeCloseTo(10); // 20 events in 2 s
    for (let t = 12_000; t < 20_000; t += 100) rate.record(t, 3); // 30/s from 12 s on
    expect(rate.perSecond(20_000)).toBeCloseTo(30, 0);
  });

  it('forgets events older than the window, however long nothing happened', () => {
    const rate = new EventRate(0, { windowMs: 1000, bucketMs: 100 });
    rate.record(50, 100);
    expect(rate.perSecond(1500)).toBe(0);
    expect(rate.perSecond(3_600_000)).toBe(0);
    rate.record(3_600_050, 5);
    expect(rate.perSecond(3_600_500)).toBeCloseTo(5);
  });

  it('does not extrapolate a burst right after the start into a huge rate', () => {
    const rate = new EventRate(1000);
    rate.record(1010, 12);
    expect(rate.perSecond(1020)).toBe(12);
  });
});

describe('RecentEvents', () => {
  it('keeps the last `capacity` events, newest first', () => {
    const recent = new RecentEvents(3);
    expect(recent.list()).toEqual([]);
    for (let i = 1; i <= 5; i++) recent.push({ at: i, type: 'add', key: `k${i}`, detail: '' });
    expect(recent.list().map((event) => event.key)).toEqual(['k5', 'k4', 'k3']);
  });
});

describe('describeChange', () => {
  it('says what changed: the phase transition, else the resourceVersions', () => {
    expect(describeChange(add(pod('a', '1', 'Pending')))).toBe('Pending');
    expect(describeChange(add({ metadata: { name: 'cm', resourceVersion: '7' } }))).toBe('rv 7');
    expect(describeChange(update(pod('a', '1', 'Running', '3'), pod('a', '1', 'Failed', '4')))).toBe('Running → Failed');
    expect(describeChange(update(pod('a', '1', 'Running', '3'), pod('a', '1', 'Running', '4')))).toBe('rv 3 → 4');
    expect(describeChange(remove(pod('a', '1', 'Running', '9')))).toBe('rv 9');
    expect(describeChange(remove(pod('a', '1', 'Running', '9'), true))).toBe('final state unknown (missed by the watch)');
  });
});

describe('DemoStats', () => {
  it('counts the initial list into the table but starts events, totals and the log at sync', () => {
    const stats = new DemoStats({ recentEvents: 5 });
    stats.apply([add(pod('a', '1', 'Running'), true), add(pod('a', '2', 'Running'), true)], 100);
    stats.markSynced(100);
    expect(stats.counts.total).toBe(2);
    expect(stats.changeTotals()).toEqual({ add: 0, update: 0, delete: 0 });
    expect(stats.recent.list()).toEqual([]);
    expect(stats.eventsPerSecond(1100)).toBe(0);

    stats.apply([update(pod('a', '1', 'Running', '1'), pod('a', '1', 'Failed', '2')), add(pod('a', '3', 'Pending'))], 600);
    stats.apply([remove(pod('a', '2', 'Running'))], 1100);
    expect(stats.changeTotals()).toEqual({ add: 1, update: 1, delete: 1 });
    expect(stats.eventsPerSecond(1100)).toBe(3);
    expect(stats.recent.list().map((event) => `${event.at} ${event.type} ${event.key}`)).toEqual(['1100 delete a/2', '600 add a/3', '600 update a/1']);
    expect(table(stats.counts)).toEqual({ a: { total: 2, Failed: 1, Pending: 1 } });
  });

  it('does not count a relist that hands back an unchanged object as an event', () => {
    const stats = new DemoStats();
    const same = pod('a', '1', 'Running');
    stats.apply([add(same, true)], 0);
    stats.markSynced(0);
    stats.apply([update(same, same)], 500);
    expect(stats.changeTotals().update).toBe(0);
    expect(stats.recent.list()).toEqual([]);
  });

  it('keeps the first sync time when the informer syncs again after a relist', () => {
    const stats = new DemoStats();
    stats.markSynced(100);
    stats.markSynced(900);
    expect(stats.syncedAt).toBe(100);
  });
});
