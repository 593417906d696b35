import { queueScheduler, shareReplay, Subject } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { handle } from '../../lib/handlers/handle';
import type { HandlerEvent, ResourceHandlers } from '../../lib/handlers/resourceHandlers';
import { HandlerQueueOverflowError } from '../../lib/handlers/notifications';
import type { Change } from '../../lib/store/change';
import { ChangeSequencer } from '../../lib/store/changeSequence';
import type { IndexedSnapshot } from '../../lib/store/indexedSnapshot';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { deferred, flushMicrotasks, newTestScheduler, obj, recordingHandlers, replace, ReplayingHandler, snapshotsOf, unschedulable, withFailingLookups, withUnreadableChanges } from './handleFixtures';

const synced: HandlerEvent = { type: 'synced' };

// s1 {a@1,b@1} synced; s2 a→2; s3 +c; s4 -b; s5 relist with nothing new; s6 relist without c, a→3.
const [s1, s2, s3, s4, s5, s6] = snapshotsOf([
  replace([obj('a', '1'), obj('b', '1')], '1'),
  { type: 'Updated', object: obj('a', '2') },
  { type: 'Added', object: obj('c', '1') },
  { type: 'Deleted', object: obj('b', '1') },
  replace([obj('a', '2'), obj('c', '1')], '9'),
  replace([obj('a', '3')], '10'),
]);

describe('handle', () => {
  it('on the real clock, delivers in the next event-loop turn instead of waiting for a timer', async () => {
    const source = new Subject<Snapshot>();
    const added: string[] = [];
    const subscription = source.pipe(handle({ onAdd: (object) => void added.push(object.metadata.name) })).subscribe();
    source.next(s1!);
    // One setImmediate later: a setImmediate turn has run; an asyncScheduler timer (>= 1 ms) has not.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(added.sort()).toEqual(['a', 'b']);
    subscription.unsubscribe();
  });

  it('delivers the first snapshot as initial adds, then each snapshot’s changes with old and new objects, and emits synced once', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-a-b-c-d', { a: s1, b: s2, c: s3, d: s4 });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, log)))).toBe('-s', { s: synced });
    });
    expect(log.slice(0, 2).sort()).toEqual(['add a@1 initial t=1', 'add b@1 initial t=1']);
    expect(log.slice(2)).toEqual(['synced t=1', 'update a 1→2 t=3', 'add c@1 t=5', 'delete b@1 t=7']);
  });

  it('gives a handler that starts late the current cache as initial adds, not the changes that built it', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const informer$ = hot('-a-b-c', { a: s1, b: s2, c: s3 }).pipe(shareReplay({ bufferSize: 1, refCount: true }));
      informer$.subscribe();
      expectObservable(informer$.pipe(handle(recordingHandlers(scheduler, log))), '----^').toBe('----s', { s: synced });
    });
    expect(log.slice(0, 2).sort()).toEqual(['add a@2 initial t=4', 'add b@1 initial t=4']);
    expect(log.slice(2)).toEqual(['synced t=4', 'add c@1 t=5']);
  });

  it('drops updates whose resourceVersion did not change (a relist resync) and passes relist deletes with finalStateUnknown', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-a-b-c-d-e-f', { a: s1, b: s2, c: s3, d: s4, e: s5, f: s6 });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, log)))).toBe('-s', { s: synced });
    });
    expect(log.slice(6)).toEqual(['delete c@1 unknown t=11', 'update a 2→3 t=11']);
  });

  it('counts a handler subscribed before the initial list as synced only once it has processed that list', () => {
    const [unsynced, first] = snapshotsOf([{ type: 'Added', object: obj('x', '1') }, replace([obj('a', '1')], '5')]);
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot('-u--f', { u: unsynced, f: first }).pipe(handle(recordingHandlers(scheduler, log)))).toBe('----s', { s: synced });
    });
    expect(log).toEqual(['add x@1 initial t=1', 'delete x@1 unknown t=4', 'add a@1 initial t=4', 'synced t=4']);
  });

  it('resyncs each handler on its own period, re-delivering every cached object as an update with isResync', () => {
    const scheduler = newTestScheduler();
    const everySecond: string[] = [];
    const everyTwoSeconds: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const [only] = snapshotsOf([replace([obj('a', '1')])]);
      const source = hot('-a', { a: only });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, everySecond), { resyncPeriod: 1000 })), '^ 3500ms !').toBe('-s', { s: synced });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, everyTwoSeconds), { resyncPeriod: 2000 })), '^ 3500ms !').toBe('-s', { s: synced });
    });
    expect(everySecond).toEqual(['add a@1 initial t=1', 'synced t=1', 'update a 1→1 resync t=1001', 'update a 1→1 resync t=2001', 'update a 1→1 resync t=3001']);
    expect(everyTwoSeconds).toEqual(['add a@1 initial t=1', 'synced t=1', 'update a 1→1 resync t=2001']);
  });

  it('raises a resync period below one second to one second', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const [only] = snapshotsOf([replace([obj('a', '1')])]);
      expectObservable(hot('a', { a: only }).pipe(handle(recordingHandlers(scheduler, log), { resyncPeriod: 10 })), '^ 1500ms !').toBe('s', { s: synced });
    });
    expect(log).toEqual(['add a@1 initial t=0', 'synced t=0', 'update a 1→1 resync t=1000']);
  });

  it('resyncs the latest state of each object', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-a 1500ms b', { a: s1, b: s2 });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, log), { resyncPeriod: 1000 })), '^ 2500ms !').toBe('-s', { s: synced });
    });
    expect(log.filter((line) => line.includes('resync') && line.startsWith('update a'))).toEqual(['update a 1→1 resync t=1001', 'update a 2→2 resync t=2001']);
  });

  it('stops deliveries and the resync timer on unsubscribe, and unsubscribing twice is harmless', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      scheduler.maxFrames = 10_000; // a resync timer left running would otherwise run forever
      const source = hot('-a 2000ms b', { a: s1, b: s2 });
      expectObservable(source.pipe(handle(recordingHandlers(scheduler, log), { resyncPeriod: 1000 })), '^ 1500ms !').toBe('-s', { s: synced });
      expectSubscriptions(source.subscriptions).toBe('^ 1500ms !');
    });
    expect(log.filter((line) => line.includes('resync')).sort()).toEqual(['update a 1→1 resync t=1001', 'update b 1→1 resync t=1001']);
    expect(log.every((line) => Number(line.split('t=')[1]) <= 1501)).toBe(true);

    const subscription = new Subject<Snapshot>().pipe(handle({})).subscribe();
    subscription.unsubscribe();
    expect(() => subscription.unsubscribe()).not.toThrow();
  });

  it('reports a throwing handler through onError and an error event, and keeps delivering', () => {
    const scheduler = newTestScheduler();
    const boom = new Error('boom');
    const errors: unknown[] = [];
    const updates: string[] = [];
    const [first, second] = snapshotsOf([replace([obj('a', '1')]), { type: 'Updated', object: obj('a', '2') }]);
    const handlers: ResourceHandlers = {
      onAdd: () => {
        throw boom;
      },
      onUpdate: (_old, o) => void updates.push(o.metadata.resourceVersion ?? ''),
      onError: (error) => void errors.push(error),
    };
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot('-a-b', { a: first, b: second }).pipe(handle(handlers, { logger: silentLogger }))).toBe('-(es)', {
        e: { type: 'error', error: boom, notification: { type: 'add', key: 'ns/a', object: obj('a', '1'), isInInitialList: true } },
        s: synced,
      });
    });
    expect(errors).toEqual([boom]);
    expect(updates).toEqual(['2']);
  });

  it('completes when the source completes and the queue is drained; errors when the source errors', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot('-a|', { a: s1 }).pipe(handle({}))).toBe('-s|', { s: synced });
      expectObservable(hot('-a#', { a: s1 }).pipe(handle({}))).toBe('-s#', { s: synced });
    });
  });

  it('unsubscribes its source on unsubscribe, completion and error, with and without resync', () => {
    const scheduler = newTestScheduler();
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      scheduler.maxFrames = 10_000; // a resync timer left running would otherwise run forever
      for (const resyncPeriod of [0, 1000]) {
        const left = hot('-a---', { a: s1 });
        const completed = hot('-a-|', { a: s1 });
        const failed = hot('-a-#', { a: s1 });
        expectObservable(left.pipe(handle({}, { resyncPeriod })), '^---!').toBe('-s', { s: synced });
        expectObservable(completed.pipe(handle({}, { resyncPeriod }))).toBe('-s-|', { s: synced });
        expectObservable(failed.pipe(handle({}, { resyncPeriod }))).toBe('-s-#', { s: synced });
        expectSubscriptions(left.subscriptions).toBe('^---!');
        expectSubscriptions(completed.subscriptions).toBe('^--!');
        expectSubscriptions(failed.subscriptions).toBe('^--!');
      }
    });
  });

  describe('when its own machinery throws (a handler that throws is reported as an error event instead)', () => {
    const broken = new Error('broken');

    it('fails with the error when a snapshot’s changes cannot be read, and unsubscribes its source', () => {
      newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const source = hot('-a-b-c', { a: s1, b: withUnreadableChanges(s2!, broken), c: s3 });
        expectObservable(source.pipe(handle({}))).toBe('-s-#', { s: synced }, broken);
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    });

    it('fails with the error when its scheduler cannot schedule a delivery turn, with or without resync', () => {
      newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        for (const resyncPeriod of [0, 1000]) {
          const source = hot('-a-b', { a: s1, b: s2 });
          expectObservable(source.pipe(handle({}, { resyncPeriod, scheduler: unschedulable(broken) }))).toBe('-#', undefined, broken);
          expectSubscriptions(source.subscriptions).toBe('^!');
        }
      });
    });

    it('fails with the error when reporting a rejected Promise throws (a logger that fails), after the Promise settled', async () => {
      const source = new Subject<Snapshot>();
      const logger = {
        ...silentLogger,
        error: () => {
          throw broken;
        },
      };
      const failures: unknown[] = [];
      const subscription = source.pipe(handle({ onAdd: () => Promise.reject(new Error('rejected')) }, { scheduler: queueScheduler, logger })).subscribe({ error: (error: unknown) => void failures.push(error) });
      source.next(s1!);
      await flushMicrotasks();
      expect(failures).toEqual([broken]);
      expect(source.observed).toBe(false);
      subscription.unsubscribe();
    });

    it('fails with the error when reading the cache throws during a delivery turn, and calls the handler no more', () => {
      const added: string[] = [];
      newTestScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        // The initial pass reads one object ahead when it starts, and the next ones in the turn:
        // the third read fails as the second object is taken, after the first was delivered.
        const [three] = snapshotsOf([replace([obj('a', '1'), obj('b', '1'), obj('c', '1')])]);
        const source = hot('-a-b', { a: withFailingLookups(three!, 3, broken), b: s2 });
        expectObservable(source.pipe(handle({ onAdd: (object) => void added.push(object.metadata.name) }))).toBe('-#', undefined, broken);
        expectSubscriptions(source.subscriptions).toBe('^!');
      });
      expect(added).toHaveLength(1);
    });
  });

  it('rejects bad options with a RangeError', () => {
    expect(() => handle({}, { resyncPeriod: -1 })).toThrow(RangeError);
    expect(() => handle({}, { maxPending: 0 })).toThrow(RangeError);
  });

  describe('with a slow asynchronous handler', () => {
    // s1 {a@1}; s2, s3: a→2→3; s4 +b.
    const [t1, t2, t3, t4] = snapshotsOf([
      replace([obj('a', '1')]),
      { type: 'Updated', object: obj('a', '2') },
      { type: 'Updated', object: obj('a', '3') },
      { type: 'Added', object: obj('b', '1') },
    ]);

    function gatedHandlers(log: string[], gates: ReturnType<typeof deferred>[]): ResourceHandlers {
      const recording = recordingHandlers(undefined, log);
      const gate = (): Promise<void> => {
        const next = deferred();
        gates.push(next);
        return next.promise;
      };
      return {
        onAdd: (o, info) => (recording.onAdd?.(o, info), gate()),
        onUpdate: (old, o, info) => (recording.onUpdate?.(old, o, info), gate()),
        onSynced: recording.onSynced,
      };
    }

    it('never delays the cache or another handler, and catches up with per-object coalesced changes', async () => {
      const source = new Subject<Snapshot>();
      const slowLog: string[] = [];
      const fastLog: string[] = [];
      const gates: ReturnType<typeof deferred>[] = [];
      const cache: Snapshot[] = [];
      source.subscribe((snapshot) => cache.push(snapshot));
      const slow = source.pipe(handle(gatedHandlers(slowLog, gates), { scheduler: queueScheduler })).subscribe();
      const fast = source.pipe(handle(recordingHandlers(undefined, fastLog), { scheduler: queueScheduler })).subscribe();

      for (const snapshot of [t1, t2, t3, t4]) source.next(snapshot);
      expect(cache).toHaveLength(4);
      expect(fastLog).toEqual(['add a@1 initial', 'synced', 'update a 1→2', 'update a 2→3', 'add b@1']);
      expect(slowLog).toEqual(['add a@1 initial']);

      gates[0].resolve();
      await flushMicrotasks();
      expect(slowLog).toEqual(['add a@1 initial', 'synced', 'update a 1→3']);
      gates[1].resolve();
      await flushMicrotasks();
      expect(slowLog).toEqual(['add a@1 initial', 'synced', 'update a 1→3', 'add b@1']);
      slow.unsubscribe();
      fast.unsubscribe();
    });

    it('reports a rejected Promise as an error event and goes on', async () => {
      const source = new Subject<Snapshot>();
      const events: HandlerEvent[] = [];
      const seen: string[] = [];
      const failure = new Error('rejected');
      const handlers: ResourceHandlers = {
        onAdd: () => Promise.reject(failure),
        onUpdate: async (_old, o) => void seen.push(o.metadata.resourceVersion ?? ''),
      };
      const subscription = source.pipe(handle(handlers, { scheduler: queueScheduler, logger: silentLogger })).subscribe((event) => events.push(event));
      source.next(t1);
      source.next(t2);
      await flushMicrotasks();
      expect(events).toEqual([{ type: 'error', error: failure, notification: { type: 'add', key: 'ns/a', object: obj('a', '1'), isInInitialList: true } }, synced]);
      expect(seen).toEqual(['2']);
      subscription.unsubscribe();
    });

    it('never loses a delete when it falls more than maxPending objects behind: it catches up from the difference', async () => {
      const source = new Subject<Snapshot>();
      const replaying = new ReplayingHandler();
      const gate = deferred();
      let blocked = true;
      const handlers: ResourceHandlers = {
        ...replaying.handlers,
        onAdd: (object, info) => {
          replaying.handlers.onAdd?.(object, info);
          if (blocked) return ((blocked = false), gate.promise); // stuck on its first call
          return undefined;
        },
      };
      const events: HandlerEvent[] = [];
      const subscription = source.pipe(handle(handlers, { scheduler: queueScheduler, maxPending: 2, logger: silentLogger })).subscribe((event) => events.push(event));
      const snapshots = snapshotsOf([
        replace([obj('a', '1'), obj('b', '1')]),
        { type: 'Deleted', object: obj('b', '2') },
        { type: 'Updated', object: obj('a', '3') },
        ...['c', 'd', 'e'].map((name) => ({ type: 'Added' as const, object: obj(name, '4') })),
      ]);
      for (const snapshot of snapshots) source.next(snapshot);
      expect(replaying.calls).toHaveLength(1); // stuck on its first call

      gate.resolve();
      await flushMicrotasks();
      expect(replaying.violations).toEqual([]);
      expect(replaying.calls.filter((call) => call.startsWith('delete ns/b@'))).toHaveLength(1);
      expect(replaying.holds(snapshots.at(-1)!)).toBe(true);
      // The overflow is reported once, when the handler stopped queuing.
      const overflows = events.filter((event) => event.type === 'error');
      expect(overflows).toHaveLength(1);
      expect(overflows[0]?.type === 'error' && overflows[0].error).toBeInstanceOf(HandlerQueueOverflowError);
      subscription.unsubscribe();
    });
  });
});

describe('handle() given a snapshot that carries several changes of one key (a batch)', () => {
  // Built by hand: the indexer's own snapshots change each key once, but a snapshot may carry many
  // changes (a relist does), and one that folds several deltas could change a key twice.
  const [first] = snapshotsOf([replace([obj('a', '1'), obj('b', '1')], '1')]) as [IndexedSnapshot<KubeObject>];
  const [a1, a2, a3, b1, c1] = [first.get('ns/a')!, obj('a', '2'), obj('a', '3'), first.get('ns/b')!, obj('c', '1')];
  const changes: Change[] = [
    { type: 'update', key: 'ns/a', oldObject: a1, object: a2, isResync: false },
    { type: 'add', key: 'ns/c', object: c1, isInInitialList: false },
    { type: 'update', key: 'ns/a', oldObject: a2, object: a3, isResync: false },
    { type: 'delete', key: 'ns/b', object: b1, finalStateUnknown: false },
    { type: 'delete', key: 'ns/c', object: c1, finalStateUnknown: false },
  ];
  const edit = first.edit();
  edit.put('ns/a', a1, a3);
  edit.remove('ns/b', b1);
  const batch = edit.finish('3', changes);
  new ChangeSequencer().stamp(batch);

  it('delivers it as a coalescing queue would, to a handler that keeps up', () => {
    const scheduler = newTestScheduler();
    const log: string[] = [];
    scheduler.run(({ hot, expectObservable }) => {
      expectObservable(hot('-a-b', { a: first, b: batch }).pipe(handle(recordingHandlers(scheduler, log)))).toBe('-s', { s: synced });
    });
    expect(log.slice(3)).toEqual(['update a 1→3 t=3', 'delete b@1 t=3']);
  });
});

// Keeps the fixture type honest: handlers for a narrower object type compile.
interface Labelled extends KubeObject {
  readonly spec: { readonly size: number };
}
export const typedHandlers: ResourceHandlers<Labelled> = { onAdd: (o) => o.spec.size };
