import fc from 'fast-check';
import { filter, shareReplay, Subject, type Subscription } from 'rxjs';
import type { Delta } from '../../lib/reflector/delta';
import { handle, type HandlerEvent, type ResourceHandlers } from '../../lib/handlers/handle';
import { CoalescingQueue } from '../../lib/handlers/handlerQueue';
import { batchSharing, SharedBatch } from '../../lib/handlers/sharedBatch';
import type { Snapshot } from '../../lib/store/snapshot';
import { flushMicrotasks, ManualScheduler, obj, replace, snapshotsOf } from './handleFixtures';

/**
 * Handlers that share batches must see exactly what each would see with a queue of its own. The
 * same random script (snapshots, handlers that are synchronous, asynchronous, throwing, late,
 * bounded, unsubscribed; turns run one at a time) runs with sharing on and off, and every
 * handler's calls and events are compared.
 */

interface HandlerSpec {
  readonly asyncEvery: number; // 0: synchronous; n: every n-th call returns a Promise the script resolves
  readonly throwEvery: number; // 0: never; n: every n-th call throws
  readonly maxPending: number;
  readonly resync: boolean;
  /** 0: receives every snapshot; n: its stream skips every snapshot whose index is a multiple of n. */
  readonly skipEvery: number;
}

type Step =
  | { readonly op: 'emit' }
  | { readonly op: 'subscribe'; readonly spec: HandlerSpec }
  | { readonly op: 'turns'; readonly count: number }
  | { readonly op: 'resolve'; readonly handler: number }
  | { readonly op: 'unsubscribe'; readonly handler: number };

const names = ['a', 'b', 'c', 'd', 'e'];
/** A delta without its resourceVersions, which concreteDeltas assigns. */
type DeltaShape = { readonly type: 'Added' | 'Updated' | 'Deleted'; readonly name: string } | { readonly type: 'Replace'; readonly keep: string[] };
const deltaShapeArb: fc.Arbitrary<DeltaShape> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constantFrom('Added' as const, 'Updated' as const, 'Deleted' as const), name: fc.constantFrom(...names) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Replace' as const), keep: fc.subarray(names) }) },
);

const specArb: fc.Arbitrary<HandlerSpec> = fc.record({
  asyncEvery: fc.constantFrom(0, 0, 0, 2, 5),
  throwEvery: fc.constantFrom(0, 0, 0, 7),
  maxPending: fc.constantFrom(100, 100, 100, 3),
  resync: fc.boolean(),
  skipEvery: fc.constantFrom(0, 0, 2, 3),
});

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ op: 'emit' as const }) },
  { weight: 2, arbitrary: specArb.map((spec) => ({ op: 'subscribe' as const, spec })) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 6 }).map((count) => ({ op: 'turns' as const, count })) },
  { weight: 3, arbitrary: fc.nat(5).map((handler) => ({ op: 'resolve' as const, handler })) },
  { weight: 1, arbitrary: fc.nat(5).map((handler) => ({ op: 'unsubscribe' as const, handler })) },
);

/** Deltas with rising resourceVersions; a relist keeps `a` at version 1, so some updates are resyncs. */
function concreteDeltas(shapes: readonly DeltaShape[]): Delta[] {
  let version = 1;
  return shapes.map((shape): Delta => {
    const rv = String(++version);
    if (shape.type === 'Replace') return replace(shape.keep.map((name) => obj(name, name === 'a' ? '1' : rv)), rv);
    return { type: shape.type, object: obj(shape.name, rv) };
  });
}

/** Runs the script; returns each handler's log of calls and events. */
async function play(snapshots: readonly Snapshot[], steps: readonly Step[]): Promise<string[][]> {
  const scheduler = new ManualScheduler();
  const source = new Subject<Snapshot>();
  const informer$ = source.pipe(shareReplay({ bufferSize: 1, refCount: false }));
  informer$.subscribe();
  const logs: string[][] = [];
  const gates: (() => void)[][] = [];
  const subscriptions: Subscription[] = [];
  let emitted = 0;

  const subscribe = (spec: HandlerSpec): void => {
    const log: string[] = [];
    const pending: (() => void)[] = [];
    let calls = 0;
    const call = (line: string): unknown => {
      calls++;
      log.push(line);
      if (spec.throwEvery > 0 && calls % spec.throwEvery === 0) throw new Error(`failed ${line}`);
      if (spec.asyncEvery > 0 && calls % spec.asyncEvery === 0) return new Promise<void>((resolve) => pending.push(resolve));
      return undefined;
    };
    const handlers: ResourceHandlers = {
      onAdd: (o, { isInInitialList }) => call(`add ${o.metadata.name}@${o.metadata.resourceVersion}${isInInitialList ? ' initial' : ''}`),
      onUpdate: (old, o, { isResync }) => call(`update ${o.metadata.name} ${old.metadata.resourceVersion}→${o.metadata.resourceVersion}${isResync ? ' resync' : ''}`),
      onDelete: (o, { finalStateUnknown }) => call(`delete ${o.metadata.name}@${o.metadata.resourceVersion}${finalStateUnknown ? ' unknown' : ''}`),
    };
    const options = { scheduler, maxPending: spec.maxPending, resyncPeriod: spec.resync ? 1000 : 0 };
    const describe = (event: HandlerEvent): string => (event.type === 'synced' ? 'synced' : `error ${event.notification.type} ${event.notification.key}`);
    const received$ = informer$.pipe(filter((snapshot) => spec.skipEvery === 0 || snapshots.indexOf(snapshot) % spec.skipEvery !== 0));
    subscriptions.push(received$.pipe(handle(handlers, options)).subscribe((event) => log.push(describe(event))));
    logs.push(log);
    gates.push(pending);
  };

  for (const step of steps) {
    switch (step.op) {
      case 'emit':
        if (emitted < snapshots.length) source.next(snapshots[emitted++]!);
        break;
      case 'subscribe':
        subscribe(step.spec);
        break;
      case 'turns':
        scheduler.run(step.count);
        break;
      case 'resolve':
        gates[step.handler % Math.max(gates.length, 1)]?.shift()?.();
        await flushMicrotasks();
        break;
      case 'unsubscribe':
        subscriptions[step.handler % Math.max(subscriptions.length, 1)]?.unsubscribe();
        break;
    }
  }
  // Drain: everything emitted, every gate opened, a bounded number of turns (resync timers recur).
  while (emitted < snapshots.length) source.next(snapshots[emitted++]!);
  for (let round = 0; round < 50; round++) {
    for (const pending of gates) pending.splice(0).forEach((resolve) => resolve());
    await flushMicrotasks();
    scheduler.run(1000);
  }
  subscriptions.forEach((subscription) => subscription.unsubscribe());
  return logs;
}

describe('handle() with shared batches', () => {
  afterEach(() => {
    batchSharing.enabled = true;
    jest.restoreAllMocks();
  });

  it('delivers to every handler exactly what its own queue would, whatever the handlers do', async () => {
    const joins = jest.spyOn(SharedBatch, 'join');
    let shared = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(deltaShapeArb, { minLength: 1, maxLength: 40 }), fc.array(stepArb, { maxLength: 120 }), async (shapes, steps) => {
        const snapshots = snapshotsOf([replace([obj('a', '1'), obj('b', '1')], '1'), ...concreteDeltas(shapes)]);
        const plain: HandlerSpec = { asyncEvery: 0, throwEvery: 0, maxPending: 100, resync: false, skipEvery: 0 };
        const script: Step[] = [{ op: 'subscribe', spec: plain }, { op: 'subscribe', spec: plain }, ...steps];
        batchSharing.enabled = false;
        const alone = await play(snapshots, script);
        batchSharing.enabled = true;
        const before = joins.mock.results.filter((result) => result.value !== undefined).length;
        const together = await play(snapshots, script);
        shared += joins.mock.results.filter((result) => result.value !== undefined).length - before;
        expect(together).toEqual(alone);
      }),
      { numRuns: 300 },
    );
    // The comparison is only worth something if batches were actually shared (about one join a run).
    expect(shared).toBeGreaterThan(100);
  });

  it('folds each change once for all the handlers that share a batch', () => {
    const scheduler = new ManualScheduler();
    const source = new Subject<Snapshot>();
    const [s0, s1] = snapshotsOf([replace([obj('a', '1')], '1'), { type: 'Updated', object: obj('a', '2') }]);
    const updates: string[] = [];
    const subscriptions = Array.from({ length: 10 }, () =>
      source.pipe(handle({ onUpdate: (_old, o) => void updates.push(o.metadata.resourceVersion ?? '') }, { scheduler })).subscribe(),
    );
    source.next(s0!);
    scheduler.run(100);
    const pushes = jest.spyOn(CoalescingQueue.prototype, 'push');
    source.next(s1!);
    scheduler.run(100);
    expect(updates).toEqual(Array<string>(10).fill('2'));
    expect(pushes).toHaveBeenCalledTimes(1);
    subscriptions.forEach((subscription) => subscription.unsubscribe());
  });

  it('keeps a change a handler received even when its batch-mate folded it away with one the handler skipped', () => {
    // G receives every snapshot; D's stream skips s2. s1 adds x, s2 deletes it (so G's batch folds
    // both into nothing), s3 adds y. G's turn runs between s2 and s3, D's only after s3.
    const [s0, s1, s2, s3] = snapshotsOf([
      replace([obj('a', '1')], '1'),
      { type: 'Added', object: obj('x', '2') },
      { type: 'Deleted', object: obj('x', '2') },
      { type: 'Added', object: obj('y', '3') },
    ]);
    const run = (): Record<'g' | 'd', string[]> => {
      const scheduler = new ManualScheduler();
      const source = new Subject<Snapshot>();
      const log = { g: [] as string[], d: [] as string[] };
      const recorder = (lines: string[]): ResourceHandlers => ({ onAdd: (o) => void lines.push(`add ${o.metadata.name}`), onDelete: (o) => void lines.push(`delete ${o.metadata.name}`) });
      const g = source.pipe(handle(recorder(log.g), { scheduler })).subscribe();
      const d = source.pipe(filter((snapshot) => snapshot !== s2), handle(recorder(log.d), { scheduler })).subscribe();
      source.next(s0!);
      scheduler.run(100);
      log.g.length = 0;
      log.d.length = 0;
      source.next(s1!);
      source.next(s2!);
      expect(scheduler.run(1)).toBe(1); // G's turn only
      source.next(s3!);
      scheduler.run(100);
      g.unsubscribe();
      d.unsubscribe();
      return log;
    };
    const together = run();
    expect(together).toEqual({ g: ['add y'], d: ['add x', 'add y'] });
    batchSharing.enabled = false;
    expect(run()).toEqual(together);
  });
});
