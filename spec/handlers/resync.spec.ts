import { resync, type ResyncTick } from '../../lib/handlers/resync';
import { newTestScheduler, obj, replace, snapshotsOf } from './handleFixtures';

const [unsyncedSnapshot] = snapshotsOf([{ type: 'Added', object: obj('x', '1') }]);
const [first, second] = snapshotsOf([replace([obj('a', '1')]), { type: 'Updated', object: obj('a', '2') }]);
const ticks = {
  u: { type: 'snapshot', snapshot: unsyncedSnapshot },
  a: { type: 'snapshot', snapshot: first },
  b: { type: 'snapshot', snapshot: second },
  A: { type: 'resync', snapshot: first },
  B: { type: 'resync', snapshot: second },
} satisfies Record<string, ResyncTick>;

describe('resync', () => {
  it('passes every snapshot through and re-delivers the latest one each period once synced', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      const source = hot('u 999ms a 1499ms b', { u: unsyncedSnapshot, a: first, b: second });
      expectObservable(source.pipe(resync({ period: 1000 })), '^ 3500ms !').toBe('u 999ms a 999ms A 499ms b 499ms B', ticks);
    });
  });

  it('never resyncs with period 0 (the default)', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a', { a: first }).pipe(resync()), '^ 5s !').toBe('a', ticks);
    });
  });

  it('raises periods below one second to one second', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a', { a: first }).pipe(resync({ period: 1 })), '^ 1500ms !').toBe('a 999ms A', ticks);
    });
  });

  it('stops its timer when the source completes or errors', () => {
    newTestScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a 1500ms |', { a: first }).pipe(resync({ period: 1000 }))).toBe('a 999ms A 500ms |', ticks);
      expectObservable(hot('a 1500ms #', { a: first }).pipe(resync({ period: 1000 }))).toBe('a 999ms A 500ms #', ticks);
    });
  });

  it('rejects a negative or NaN period with a RangeError', () => {
    expect(() => resync({ period: -5 })).toThrow(RangeError);
    expect(() => resync({ period: Number.NaN })).toThrow(RangeError);
  });
});
