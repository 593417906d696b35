import { silentLogger } from '../../lib/base/logger';
import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import type { RunHelpers } from 'rxjs/testing';
import { informerFromNamespaces } from '../../lib/informer/informer';
import type { InformerMetricEvent } from '../../lib/informer/informerMetrics';
import type { Health } from '../../lib/reflector/health';
import type { HandlerEvent } from '../../lib/handlers/resourceHandlers';
import type { Change } from '../../lib/store/change';
import { labelIndex } from '../../lib/store/indexers';
import type { Snapshot } from '../../lib/store/snapshot';
import type { KubeObject } from '../../lib/base/object';
import type { ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { added, expired, modified, newTestScheduler, page, scriptedListerWatcher, statusError, type ScriptedListerWatcher } from '../reflector/reflectHarness';

/**
 * An informer over a set of namespaces, in virtual time: one scripted list/watch per namespace
 * feeding one cache.
 */

const podIn = (namespace: string, name: string, resourceVersion: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, resourceVersion } });

type Script = (helpers: RunHelpers) => { lists?: (() => Observable<ListPage>)[]; watches?: (() => Observable<WatchEvent>)[] };

/** Scripted lister-watchers by namespace, made inside the run so that their marbles start at call time. */
function sources(helpers: RunHelpers, scheduler: ReturnType<typeof newTestScheduler>, scripts: Record<string, Script>): Record<string, ScriptedListerWatcher> {
  return Object.fromEntries(Object.entries(scripts).map(([namespace, script]) => [namespace, scriptedListerWatcher(scheduler, script(helpers))]));
}

const describeChange = (c: Change): string => {
  const mark = c.type !== 'update' && c.namespaceSet ? ` (${c.namespaceSet.type})` : '';
  if (c.type === 'delete') return `delete ${c.key}${mark}`;
  if (c.type === 'add') return `add ${c.key}${c.isInInitialList ? ' initial' : ''}${mark}`;
  return `update ${c.key}${c.isResync ? ' resync' : ''}`;
};

const keys = (snapshot: Snapshot): string[] => [...snapshot.keys()].sort();

describe('informerFromNamespaces', () => {
  it('keeps one cache of every namespace, synced once each has listed, with the watch events of each', () => {
    const scheduler = newTestScheduler();
    const snapshots: { at: number; snapshot: Snapshot }[] = [];
    const synced: number[] = [];
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, {
        a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1')], '10') })], watches: [() => cold('10ms w', { w: added(podIn('a', 'y', '12')) })] }),
        b: ({ cold }) => ({ lists: [() => cold('5ms (p|)', { p: page([podIn('b', 'x', '2')], '11') })], watches: [() => cold('10ms w', { w: modified(podIn('b', 'x', '13')) })] }),
      });
      const shared = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: ['a', 'b'], scheduler, logger: silentLogger });
      const running = shared.informer$.subscribe((snapshot) => snapshots.push({ at: scheduler.now(), snapshot }));
      shared.synced$.subscribe(() => synced.push(scheduler.now()));
      scheduler.schedule(() => running.unsubscribe(), 100);
    });
    expect(snapshots.map(({ at, snapshot }) => [at, snapshot.synced, snapshot.changes.map(describeChange)])).toEqual([
      [0, false, ['add a/x initial']],
      [5, true, ['add b/x initial']],
      [10, true, ['add a/y']],
      [15, true, ['update b/x']],
    ]);
    expect(synced).toEqual([5]);
    expect(keys(snapshots.at(-1)!.snapshot)).toEqual(['a/x', 'a/y', 'b/x']);
  });

  it('relists one namespace after a 410 without touching the objects of the others', () => {
    const scheduler = newTestScheduler();
    const snapshots: Snapshot[] = [];
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, {
        a: ({ cold }) => ({
          lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1'), podIn('a', 'gone', '1')], '10') }), () => cold('(p|)', { p: page([podIn('a', 'x', '1'), podIn('a', 'new', '20')], '20') })],
          watches: [() => cold('5ms #', {}, expired())],
        }),
        b: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([podIn('b', 'x', '2')], '11') })] }),
      });
      const running = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: ['a', 'b'], scheduler, backoff: { jitter: 'none' }, logger: silentLogger }).informer$.subscribe((snapshot) => snapshots.push(snapshot));
      scheduler.schedule(() => running.unsubscribe(), 2000);
    });
    const relist = snapshots.at(-1)!;
    expect(relist.changes.map(describeChange)).toEqual(['delete a/gone', 'update a/x resync', 'add a/new']);
    expect(relist.get('b/x')).toBe(snapshots[1]!.get('b/x'));
    expect(keys(relist)).toEqual(['a/new', 'a/x', 'b/x']);
  });

  it('follows an Observable set: an added namespace arrives as marked adds, a removed one stops its watch and leaves as marked deletes', () => {
    const scheduler = newTestScheduler();
    const handled: string[] = [];
    let lws: Record<string, ScriptedListerWatcher> = {};
    const snapshots: Snapshot[] = [];
    scheduler.run((helpers) => {
      const { cold } = helpers;
      lws = sources(helpers, scheduler, {
        a: () => ({ lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1')], '10') })] }),
        b: () => ({ lists: [() => cold('(p|)', { p: page([podIn('b', 'x', '2')], '11') })] }),
        c: () => ({ lists: [() => cold('(p|)', { p: page([podIn('c', 'x', '3'), podIn('c', 'y', '3')], '12') })] }),
      });
      const set = new BehaviorSubject<readonly string[]>(['a', 'b']);
      const shared = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: set, scheduler, logger: silentLogger });
      const running = shared.informer$.subscribe((snapshot) => snapshots.push(snapshot));
      const handling = shared
        .handle({
          onAdd: (object, { namespaceSet }) => void handled.push(`add ${object.metadata.namespace}/${object.metadata.name}${namespaceSet ? ` ${namespaceSet.type} ${namespaceSet.namespace}` : ''}`),
          onDelete: (object, { namespaceSet }) => void handled.push(`delete ${object.metadata.namespace}/${object.metadata.name}${namespaceSet ? ` ${namespaceSet.type} ${namespaceSet.namespace}` : ''}`),
        })
        .subscribe();
      scheduler.schedule(() => set.next(['b', 'c', 'b']), 10);
      scheduler.schedule(() => {
        running.unsubscribe();
        handling.unsubscribe();
      }, 100);
    });
    expect(handled).toEqual(['add a/x', 'add b/x', 'delete a/x removed a', 'add c/x added c', 'add c/y added c']);
    expect(keys(snapshots.at(-1)!)).toEqual(['b/x', 'c/x', 'c/y']);
    expect(snapshots.every((snapshot, i) => i === 0 || snapshot.synced)).toBe(true);
    // a's watch was stopped when a left the set; b's and c's run on until the end of the run.
    expect(lws['a']!.calls.find((call) => call.kind === 'watch')?.closedAt).toBe(10);
    expect(lws['b']!.calls.filter((call) => call.kind === 'list')).toHaveLength(1);
  });

  it('shows the least healthy watch on health$, and idle once every watch has stopped', () => {
    const scheduler = newTestScheduler();
    const seen: { at: number; health: Health }[] = [];
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, {
        a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([], '10') })] }),
        b: ({ cold }) => ({ lists: [() => cold('#', {}, statusError(403, 'Forbidden', { message: 'pods is forbidden in namespace b' })), () => cold('(p|)', { p: page([], '11') })] }),
      });
      const shared = informerFromNamespaces((namespace) => lws[namespace]!, { name: 'pods@[a,b]', namespaces: ['a', 'b'], scheduler, backoff: { jitter: 'none' }, logger: silentLogger });
      shared.health$.subscribe((health) => seen.push({ at: scheduler.now(), health }));
      const running = shared.informer$.subscribe();
      scheduler.schedule(() => running.unsubscribe(), 2000);
    });
    const phases = seen.map(({ at, health }) => `${at} ${health.phase} ${health.attempt}`);
    // b backs off for 800 ms after its 403 while a watches; then both watch; then both stop.
    expect(phases).toContain('0 backingOff 1');
    expect(seen.find(({ health }) => health.phase === 'backingOff')?.health.lastError?.message).toMatch(/^pods@\[a,b\]: .*forbidden in namespace b/);
    expect(phases.filter((line) => line.startsWith('800 '))).toEqual(['800 listing 1', '800 watching 0']);
    // The watches stop in turn: the one left is shown (the longer-watching one was), then idle.
    expect(phases.filter((line) => line.startsWith('2000 '))).toEqual(['2000 watching 0', '2000 idle 0']);
    expect(phases.filter((line) => line.includes('idle'))).toEqual(['0 idle 0', '2000 idle 0']);
  });

  it('measures every watch on metrics$, and reports a removed namespace\'s watch stopped', () => {
    const scheduler = newTestScheduler();
    const metrics: { at: number; event: InformerMetricEvent }[] = [];
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, {
        a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1')], '10') })], watches: [() => cold('3ms w', { w: added(podIn('a', 'y', '12')) })] }),
        b: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([], '11') })] }),
      });
      const set = new Subject<readonly string[]>();
      const shared = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: set, scheduler, logger: silentLogger });
      shared.metrics$.subscribe((event) => metrics.push({ at: scheduler.now(), event }));
      const running = shared.informer$.subscribe();
      set.next(['a', 'b']);
      scheduler.schedule(() => set.next(['b']), 5);
      scheduler.schedule(() => running.unsubscribe(), 9);
    });
    expect(metrics.map(({ at, event }) => `${at} ${event.type}${'outcome' in event ? ` ${event.outcome}` : ''}${'items' in event ? ` ${event.items}` : ''}`)).toEqual([
      '0 listStarted',
      '0 listStarted',
      '0 listEnded completed 1',
      '0 watchStarted',
      '0 listEnded completed 0',
      '0 watchStarted',
      '3 watchEvent',
      '5 watchEnded stopped',
      '9 watchEnded stopped',
    ]);
  });

  it('syncs at once, empty, over an empty set, and turns an empty set later into deletes of everything', () => {
    const scheduler = newTestScheduler();
    const snapshots: Snapshot[] = [];
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, { a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1')], '10') })] }) });
      const set = new BehaviorSubject<readonly string[]>([]);
      const running = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: set, scheduler, logger: silentLogger }).informer$.subscribe((snapshot) => snapshots.push(snapshot));
      scheduler.schedule(() => set.next(['a']), 1);
      scheduler.schedule(() => set.next([]), 2);
      scheduler.schedule(() => running.unsubscribe(), 10);
    });
    expect(snapshots.map((s) => [s.synced, s.size, s.changes.map(describeChange)])).toEqual([
      [true, 0, []],
      [true, 1, ['add a/x (added)']],
      [true, 0, ['delete a/x (removed)']],
    ]);
  });

  it('keeps the namespace index when the indexers given lack it', () => {
    const scheduler = newTestScheduler();
    let last: Snapshot | undefined;
    scheduler.run((helpers) => {
      const lws = sources(helpers, scheduler, { a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([podIn('a', 'x', '1')], '10') })] }) });
      const running = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: ['a'], scheduler, indexers: { app: labelIndex('app') } }).informer$.subscribe((snapshot) => (last = snapshot));
      scheduler.schedule(() => running.unsubscribe(), 10);
    });
    expect(last?.indexKeys('namespace', 'a')).toEqual(['a/x']);
    expect(last?.indexValues('app')).toEqual([]);
  });

  it('stops every watch and timer when the last subscriber leaves', () => {
    const scheduler = newTestScheduler();
    let lws: Record<string, ScriptedListerWatcher> = {};
    let pending = -1;
    const events: HandlerEvent[] = [];
    scheduler.run((helpers) => {
      lws = sources(helpers, scheduler, {
        a: ({ cold }) => ({ lists: [() => cold('(p|)', { p: page([], '10') })] }),
        b: ({ cold }) => ({ lists: [() => cold('#', {}, statusError(500, 'InternalError'))] }),
      });
      const shared = informerFromNamespaces((namespace) => lws[namespace]!, { namespaces: ['a', 'b'], scheduler, logger: silentLogger });
      const running = shared.handle({}).subscribe((event) => events.push(event));
      scheduler.schedule(() => running.unsubscribe(), 100);
      scheduler.schedule(() => (pending = scheduler.actions.length), 101);
    });
    expect(lws['a']!.open()).toBe(0);
    expect(lws['b']!.open()).toBe(0);
    expect(pending).toBe(0);
    // b never listed, so neither the cache nor the handler synced.
    expect(events).toEqual([]);
  });

  it('refuses a set holding something other than names, at once for a list and as an error for an Observable', () => {
    const never = scriptedListerWatcher(newTestScheduler(), {});
    expect(() => informerFromNamespaces(() => never, { namespaces: ['a', ''] })).toThrow(new TypeError('namespaces must be non-empty namespace names, got ""'));
    const set = new Subject<readonly string[]>();
    const errors: unknown[] = [];
    informerFromNamespaces(() => never, { namespaces: set }).informer$.subscribe({ error: (error: unknown) => errors.push(error) });
    set.next([42 as unknown as string]);
    expect(errors).toEqual([new TypeError('namespaces must be non-empty namespace names, got 42')]);
  });
});
