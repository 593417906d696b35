import { interval, take, timer, VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { skewedScheduler } from '../../lib/testing/skewedScheduler';

describe('skewedScheduler', () => {
  it('reads the base clock offset and scaled', () => {
    const base = new VirtualTimeScheduler(VirtualAction, Infinity);
    base.frame = 1_000;
    expect(skewedScheduler(base, { offset: 500, rate: 2 }).now()).toBe(2_500);
    expect(skewedScheduler(base).now()).toBe(1_000);
  });

  it('waits skewed time: a 1 s timer on a clock running twice as fast fires after 500 ms of the base', () => {
    const base = new VirtualTimeScheduler(VirtualAction, Infinity);
    const fast = skewedScheduler(base, { rate: 2 });
    const fired: number[] = [];
    timer(1_000, fast).subscribe(() => fired.push(base.now()));
    interval(1_000, fast)
      .pipe(take(3))
      .subscribe(() => fired.push(base.now()));
    base.flush();
    expect(fired).toEqual([500, 500, 1_000, 1_500]);
  });

  it('rejects a rate that is not a positive finite number', () => {
    const base = new VirtualTimeScheduler();
    expect(() => skewedScheduler(base, { rate: 0 })).toThrow(RangeError);
    expect(() => skewedScheduler(base, { rate: Number.NaN })).toThrow(RangeError);
  });
});
