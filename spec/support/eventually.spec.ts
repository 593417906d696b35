import { of, Subject, throwError } from 'rxjs';
import { EVENTUALLY_MS, eventually, firstSatisfying, withMessage, within } from './eventually';

/** The error a promise rejected with, or undefined if it resolved (read after the timers ran). */
function outcomeOf(promise: Promise<unknown>): { readonly error: () => Error | undefined; readonly settled: () => boolean } {
  let error: Error | undefined;
  let settled = false;
  promise.then(
    () => (settled = true),
    (e: Error) => ((error = e), (settled = true)),
  );
  return { error: () => error, settled: () => settled };
}

describe('eventually', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('keeps its default deadline under jest’s testTimeout, so it reports before jest does', () => {
    expect(EVENTUALLY_MS).toBeLessThan(20_000);
  });

  it('passes on the first attempt without waiting when the assertion already holds, with its result', async () => {
    let attempts = 0;
    const result = await eventually(() => {
      attempts++;
      expect([1, 2]).toContain(2);
      return 'held';
    });
    expect(result).toBe('held');
    expect(attempts).toBe(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes on the attempt at which the assertion starts to hold, not later', async () => {
    const received: string[] = [];
    let attempts = 0;
    const waiting = eventually(
      () => {
        attempts++;
        expect(received).toContain('x');
      },
      { intervalMs: 10 },
    );
    const outcome = outcomeOf(waiting);
    await jest.advanceTimersByTimeAsync(30);
    expect(outcome.settled()).toBe(false);
    received.push('x');
    await jest.advanceTimersByTimeAsync(10);
    expect(outcome.settled()).toBe(true);
    expect(outcome.error()).toBeUndefined();
    expect(attempts).toBe(5); // at 0, 10, 20, 30 ms failing; at 40 ms passing
    expect(jest.getTimerCount()).toBe(0);
  });

  it('past the deadline, fails with the matcher’s message of the last attempt: matcher, expected and received', async () => {
    let attempts = 0;
    const outcome = outcomeOf(
      eventually(() => expect(`attempt ${++attempts}`).toBe('x'), { timeoutMs: 100 }),
    );
    await jest.advanceTimersByTimeAsync(99);
    expect(outcome.settled()).toBe(false); // the attempt at the deadline has not run yet
    await jest.advanceTimersByTimeAsync(1);
    const error = outcome.error();
    expect(attempts).toBe(11); // at 0, 10, ..., 100 ms
    expect(error?.message).toMatch(/^still failing after 100 ms \(11 attempts\):\n/);
    expect(error?.message).toContain('expect(received).toBe(expected)');
    expect(error?.message).toContain('Expected: "x"');
    expect(error?.message).toContain('Received: "attempt 11"'); // the last attempt's, not the first's
  });

  it('retries an async assertion until its promise resolves, and reports its rejection past the deadline', async () => {
    let value = 0;
    const passing = outcomeOf(eventually(async () => expect(await Promise.resolve(value)).toBe(1)));
    await jest.advanceTimersByTimeAsync(50);
    expect(passing.settled()).toBe(false);
    value = 1;
    await jest.advanceTimersByTimeAsync(10);
    expect(passing.settled()).toBe(true);
    expect(passing.error()).toBeUndefined();

    const failing = outcomeOf(eventually(async () => expect(await Promise.resolve('a')).toBe('b'), { timeoutMs: 50 }));
    await jest.advanceTimersByTimeAsync(60);
    expect(failing.error()?.message).toMatch(/^still failing after 50 ms[^\n]*\n[\s\S]*expect\(received\)\.toBe\(expected\)[\s\S]*Expected: "b"[\s\S]*Received: "a"/);
  });

  it('waits between attempts as `pause` says, when one is given', async () => {
    let pauses = 0;
    let attempts = 0;
    await eventually(
      () => expect(++attempts).toBe(3),
      { pause: async () => void pauses++ },
    );
    expect(pauses).toBe(2);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('reports a thrown non-Error value as what was seen', async () => {
    const outcome = outcomeOf(
      eventually(
        () => {
          throw 'not yet'; // eslint-disable-line no-throw-literal
        },
        { timeoutMs: 20 },
      ),
    );
    await jest.advanceTimersByTimeAsync(30);
    expect(outcome.error()?.message).toMatch(/^still failing after 20 ms \(\d+ attempts\): not yet$/);
  });
});

describe('within', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resolves with the promise’s value as soon as it settles, and leaves no timer behind', async () => {
    let resolve: (value: number) => void = () => undefined;
    const outcome = outcomeOf(within(new Promise<number>((r) => (resolve = r)), 5_000, 'the answer'));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(outcome.settled()).toBe(false);
    resolve(42);
    await expect(within(Promise.resolve(42), 5_000, 'the answer')).resolves.toBe(42);
    await jest.advanceTimersByTimeAsync(0);
    expect(outcome.settled()).toBe(true);
    expect(outcome.error()).toBeUndefined();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes the promise’s own rejection through', async () => {
    await expect(within(Promise.reject(new Error('refused')), 5_000, 'the answer')).rejects.toThrow('refused');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects at the deadline naming what it waited for', async () => {
    const outcome = outcomeOf(within(new Promise(() => undefined), 5_000, 'the watch request to close'));
    await jest.advanceTimersByTimeAsync(4_999);
    expect(outcome.settled()).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(outcome.error()?.message).toBe('timed out after 5000 ms waiting for the watch request to close');
    expect(outcome.error()?.stack).toContain('eventually.spec.ts'); // the line that waited, not the timer's
  });

  it('adds what it saw instead, read at the deadline', async () => {
    const lines = ['a'];
    const outcome = outcomeOf(within(new Promise(() => undefined), 100, 'a line "c"', () => lines));
    lines.push('b');
    await jest.advanceTimersByTimeAsync(100);
    expect(outcome.error()?.message).toBe(`timed out after 100 ms waiting for a line "c"; saw instead: [ 'a', 'b' ]`);
  });
});

describe('firstSatisfying', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('resolves with the first value that passes, at once, and unsubscribes', async () => {
    const values = new Subject<number>();
    const outcome = outcomeOf(firstSatisfying(values, (n) => expect(n).toBeGreaterThan(2)));
    values.next(1);
    values.next(3);
    await jest.advanceTimersByTimeAsync(0);
    expect(outcome.settled()).toBe(true);
    expect(outcome.error()).toBeUndefined();
    expect(values.observed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    await expect(firstSatisfying(of(1, 5, 7), (n) => expect(n).toBeGreaterThan(2))).resolves.toBe(5);
  });

  it('past the deadline, fails with the last value’s assertion and unsubscribes', async () => {
    const values = new Subject<string>();
    const outcome = outcomeOf(firstSatisfying(values, (line) => expect(line).toBe('synced'), { timeoutMs: 100 }));
    values.next('add a');
    values.next('add b');
    await jest.advanceTimersByTimeAsync(100);
    expect(outcome.error()?.message).toMatch(/^no value within 100 ms; the last of 2 values failed:\n[\s\S]*Expected: "synced"\nReceived: "add b"$/);
    expect(values.observed).toBe(false);
  });

  it('names the assertion when no value came, or the stream completed first', async () => {
    const silent = outcomeOf(firstSatisfying(new Subject<string>(), (line) => expect(line).toBe('synced'), { timeoutMs: 100 }));
    await jest.advanceTimersByTimeAsync(100);
    expect(silent.error()?.message).toBe("no value within 100 ms, and no value came to check against (line) => expect(line).toBe('synced')");
    expect(silent.error()?.stack).toContain('eventually.spec.ts');

    await expect(firstSatisfying(of('a'), (line) => expect(line).toBe('b'))).rejects.toThrow(/^the stream completed; the last of 1 values failed:\n[\s\S]*Received: "a"$/);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes the stream’s error through', async () => {
    await expect(firstSatisfying(throwError(() => new Error('boom')), () => undefined)).rejects.toThrow('boom');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('withMessage', () => {
  it('replaces the message in the error and in its stack’s head, keeping the frames, whether the message was empty or several lines', () => {
    for (const original of [new Error(), new Error('first line\nsecond line')]) {
      const error = withMessage(original, 'what was expected\nand what was seen');
      expect(error).toBe(original);
      expect(error.message).toBe('what was expected\nand what was seen');
      expect(error.stack).toMatch(/^Error: what was expected\nand what was seen\n\s+at .*eventually\.spec\.ts/);
      expect(error.stack).not.toContain('first line');
    }
  });
});
