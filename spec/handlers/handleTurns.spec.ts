import { Subject } from 'rxjs';
import { handle } from '../../lib/handlers/handle';
import type { Snapshot } from '../../lib/store/snapshot';
import { ManualScheduler, obj, replace, snapshotsOf } from './handleFixtures';

/**
 * handle() delivers in turns that yield to the event loop after 500 calls or about 10 ms of
 * handler time, so a long initial list never stalls the process. The clock here is the
 * scheduler's, advanced by the handler itself to play a handler of a given cost.
 */
describe('handle() delivery turns', () => {
  const [big] = snapshotsOf([replace(Array.from({ length: 1200 }, (_, i) => obj(`o${i}`, '1')))]);

  /** Calls made in each turn, until the initial list is delivered. */
  function callsPerTurn(costOfCall: (call: number) => number): number[] {
    const scheduler = new ManualScheduler();
    const source = new Subject<Snapshot>();
    let calls = 0;
    const subscription = source
      .pipe(handle({ onAdd: () => void (scheduler.clock += costOfCall(calls++)) }, { scheduler }))
      .subscribe();
    source.next(big!);
    const turns: number[] = [];
    for (let before = 0; calls < 1200 && turns.length < 1000; before = calls) {
      scheduler.run(1);
      turns.push(calls - before);
    }
    subscription.unsubscribe();
    return turns;
  }

  it('yields after 500 calls of a fast handler', () => {
    expect(callsPerTurn(() => 0)).toEqual([500, 500, 200]);
  });

  it('yields once a slow handler has taken 10 ms, reading the clock after every call once calls are slow', () => {
    // 3 ms a call: the clock reads 0 before the first call, 6 after two, 9 after three, 12 after four.
    expect(callsPerTurn(() => 3).slice(0, 3)).toEqual([4, 4, 4]);
  });

  it('overshoots by at most 8 calls when fast calls turn slow', () => {
    // 100 calls of no cost, then 5 ms each: the clock is read at least every 8 calls.
    const turns = callsPerTurn((call) => (call < 100 ? 0 : 5));
    expect(turns[0]).toBeGreaterThanOrEqual(102);
    expect(turns[0]).toBeLessThanOrEqual(100 + 8 + 2);
  });
});
