import fc from 'fast-check';
import { shareReplay, Subject, type Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { handle } from '../../lib/handlers/handle';
import type { HandlerEvent, ResourceHandlers } from '../../lib/handlers/resourceHandlers';
import { HandlerQueueOverflowError } from '../../lib/handlers/notifications';
import type { Delta } from '../../lib/reflector/delta';
import type { Snapshot } from '../../lib/store/snapshot';
import { batched, flushMicrotasks, ManualScheduler, obj, replace, ReplayingHandler, snapshotsOf } from './handleFixtures';

/**
 * Whatever the informer does and however far behind a handler falls, a handler that replays what
 * it receives onto the first snapshot ends with exactly the last snapshot's objects, and every
 * call it gets is legal for what it has seen (no add of a key it holds, no update from a state it
 * does not hold, no delete of a key it does not hold). A handler that overflows its `maxPending`
 * loses nothing: it catches up from the difference between what it saw and the cache.
 */

const names = ['a', 'b', 'c', 'd', 'e', 'f'];

/** A delta without versions and uids, which concreteDeltas assigns. */
type DeltaShape = { readonly type: 'Added' | 'Updated' | 'Deleted'; readonly name: string } | { readonly type: 'Replace'; readonly keep: string[] };
const deltaShapeArb: fc.Arbitrary<DeltaShape> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ type: fc.constantFrom('Added' as const, 'Updated' as const, 'Deleted' as const), name: fc.constantFrom(...names) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Replace' as const), keep: fc.subarray(names) }) },
);

interface HandlerSpec {
  readonly asyncEvery: number; // 0: synchronous; n: every n-th call returns a Promise the script resolves
  readonly throwEvery: number; // 0: never; n: every n-th call throws (after it is recorded)
  readonly maxPending: number;
  readonly resync: boolean;
}

type Step =
  | { readonly op: 'emit' }
  | { readonly op: 'subscribe'; readonly spec: HandlerSpec }
  | { readonly op: 'turns'; readonly count: number }
  | { readonly op: 'resolve'; readonly handler: number }
  | { readonly op: 'tick' };

const specArb: fc.Arbitrary<HandlerSpec> = fc.record({
  asyncEvery: fc.constantFrom(0, 0, 1, 2, 5),
  throwEvery: fc.constantFrom(0, 0, 0, 7),
  maxPending: fc.constantFrom(1, 2, 3, 5, 1000),
  resync: fc.boolean(),
});

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ op: 'emit' as const }) },
  { weight: 2, arbitrary: specArb.map((spec) => ({ op: 'subscribe' as const, spec })) },
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 6 }).map((count) => ({ op: 'turns' as const, count })) },
  { weight: 4, arbitrary: fc.nat(5).map((handler) => ({ op: 'resolve' as const, handler })) },
  { weight: 1, arbitrary: fc.constant({ op: 'tick' as const }) },
);

/**
 * Deltas as a server would send them: every write gets a new resourceVersion, a name deleted (by a
 * delete or by a relist without it) and created again gets a new uid, and a relist lists the
 * objects it keeps at their current versions, so its updates of them are relist resyncs.
 */
function concreteDeltas(shapes: readonly DeltaShape[]): Delta[] {
  let version = 1;
  const incarnation = new Map<string, number>(names.map((name) => [name, 0]));
  const current = new Map<string, string>([
    ['a', '1'],
    ['b', '1'],
  ]);
  const object = (name: string, rv: string) => obj(name, rv, { uid: `${name}-${incarnation.get(name)!}` });
  const deleted = (name: string): void => {
    if (current.delete(name)) incarnation.set(name, incarnation.get(name)! + 1);
  };
  return shapes.map((shape): Delta => {
    const rv = String(++version);
    if (shape.type === 'Replace') {
      names.filter((name) => !shape.keep.includes(name)).forEach(deleted);
      for (const name of shape.keep) if (!current.has(name)) current.set(name, rv);
      return replace(shape.keep.map((name) => object(name, current.get(name)!)), rv);
    }
    if (shape.type === 'Deleted') {
      const delta: Delta = { type: 'Deleted', object: object(shape.name, rv) };
      deleted(shape.name);
      return delta;
    }
    current.set(shape.name, rv);
    return { type: shape.type, object: object(shape.name, rv) };
  });
}

interface Played {
  readonly handlers: ReplayingHandler[];
  readonly events: HandlerEvent[][];
}

/** Runs the script, then lets every handler finish; returns what each handler saw. */
async function play(snapshots: readonly Snapshot[], steps: readonly Step[]): Promise<Played> {
  const scheduler = new ManualScheduler();
  const source = new Subject<Snapshot>();
  const informer$ = source.pipe(shareReplay({ bufferSize: 1, refCount: false }));
  informer$.subscribe();
  const played: Played = { handlers: [], events: [] };
  const gates: (() => void)[][] = [];
  const subscriptions: Subscription[] = [];
  let emitted = 0;

  const subscribe = (spec: HandlerSpec): void => {
    const replaying = new ReplayingHandler();
    const pending: (() => void)[] = [];
    let calls = 0;
    const after = (): unknown => {
      calls++;
      if (spec.throwEvery > 0 && calls % spec.throwEvery === 0) throw new Error('failed');
      if (spec.asyncEvery > 0 && calls % spec.asyncEvery === 0) return new Promise<void>((resolve) => pending.push(resolve));
      return undefined;
    };
    const recorded = replaying.handlers;
    const handlers: ResourceHandlers = {
      onAdd: (object, info) => (recorded.onAdd?.(object, info), after()),
      onUpdate: (oldObject, object, info) => (recorded.onUpdate?.(oldObject, object, info), after()),
      onDelete: (object, info) => (recorded.onDelete?.(object, info), after()),
    };
    const events: HandlerEvent[] = [];
    // Throwing handlers and overflows are the point here: error events, not log lines, are checked.
    const options = { scheduler, maxPending: spec.maxPending, resyncPeriod: spec.resync ? 1000 : 0, logger: silentLogger };
    subscriptions.push(informer$.pipe(handle(handlers, options)).subscribe((event) => events.push(event)));
    played.handlers.push(replaying);
    played.events.push(events);
    gates.push(pending);
  };

  for (const step of steps) {
    switch (step.op) {
      case 'emit':
        if (emitted < snapshots.length) source.next(snapshots[emitted++]!);
        break;
      case 'subscribe':
        if (emitted > 0) subscribe(step.spec);
        break;
      case 'turns':
        scheduler.run(step.count);
        break;
      case 'resolve':
        gates[step.handler % Math.max(gates.length, 1)]?.shift()?.();
        await flushMicrotasks();
        break;
      case 'tick':
        scheduler.clock += 1000;
        break;
    }
  }
  while (emitted < snapshots.length) source.next(snapshots[emitted++]!);
  for (let round = 0; round < 60; round++) {
    for (const pending of gates) pending.splice(0).forEach((resolve) => resolve());
    await flushMicrotasks();
    scheduler.run(1000);
  }
  subscriptions.forEach((subscription) => subscription.unsubscribe());
  return played;
}

describe('handle() replayed', () => {
  it('ends with exactly the last snapshot’s objects, through legal calls only, whatever maxPending and however many changes a snapshot carries', async () => {
    let overflowed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(deltaShapeArb, { minLength: 1, maxLength: 50 }),
        specArb,
        fc.array(stepArb, { maxLength: 150 }),
        // Runs of snapshots folded into one (batches of deltas); none half of the time.
        fc.oneof(fc.constant([]), fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 6 })),
        async (shapes, first, steps, batchSizes) => {
          const snapshots = batched(snapshotsOf([replace([obj('a', '1', { uid: 'a-0' }), obj('b', '1', { uid: 'b-0' })], '1'), ...concreteDeltas(shapes)]), batchSizes);
          const played = await play(snapshots, [{ op: 'emit' }, { op: 'subscribe', spec: first }, ...steps]);
          const last = snapshots.at(-1)!;
          for (const handler of played.handlers) {
            expect(handler.violations).toEqual([]);
            expect(handler.holds(last)).toBe(true);
          }
          for (const events of played.events) {
            if (events.some((event) => event.type === 'error' && event.error instanceof HandlerQueueOverflowError)) overflowed++;
          }
        },
      ),
      { numRuns: 400 },
    );
    // Worth something only if handlers did fall behind their bound.
    expect(overflowed).toBeGreaterThan(50);
  });
});
