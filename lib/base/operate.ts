import { Observable, type Observer, type OperatorFunction, type Subscriber, type TeardownLogic } from 'rxjs';

/**
 * The one way this library writes an operator by hand, in the shape of RxJS's own (internal)
 * `operate` and `createOperatorSubscriber`, which RxJS does not export: where a `pipe(...)` of
 * existing operators cannot express an operator, it is written with these two, so that
 *
 * 1. anything thrown while setting the operator up, or by its `next`/`complete` handlers, reaches
 *    the subscriber's `error` (never RxJS's unhandled-error path, never the producer);
 * 2. an error of the source reaches the subscriber's `error` unless the operator says otherwise;
 * 3. the teardown `init` returns runs on unsubscribe, error and completion alike, and it is where
 *    the source's subscription and every timer of the operator are released.
 *
 * ## Example
 * ```ts
 * import { operate, operatorObserver } from './operate';
 *
 * // Emits each value and how many came before it.
 * const numbered = <T>() =>
 *   operate<T, [T, number]>((source, subscriber) => {
 *     let count = 0;
 *     return source.subscribe(operatorObserver(subscriber, { next: (value) => subscriber.next([value, count++]) }));
 *   });
 * ```
 *
 * @param init subscribes to `source` on behalf of `subscriber` (with {@link operatorObserver}) and
 *   returns the teardown.
 * @returns the operator.
 */
export function operate<T, R>(init: (source: Observable<T>, subscriber: Subscriber<R>) => TeardownLogic): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      try {
        return init(source, subscriber);
      } catch (error: unknown) {
        subscriber.error(error);
        return undefined;
      }
    });
}

/** What an operator does with each notification of its source; see {@link operatorObserver}. */
export interface OperatorHandlers<T> {
  /** Each value of the source. A throw becomes the subscriber's error. */
  readonly next: (value: T) => void;
  /** The source failed. Default: the subscriber fails with the same error. A throw becomes the subscriber's error. */
  readonly error?: (error: unknown) => void;
  /** The source completed. Default: the subscriber completes. A throw becomes the subscriber's error. */
  readonly complete?: () => void;
}

/**
 * The observer an operator subscribes to its source with: `handlers`, each guarded so that what
 * it throws reaches `subscriber.error`, with errors and completion passed on by default.
 *
 * @param subscriber the operator's subscriber: where errors go.
 * @param handlers what to do with the source's notifications.
 * @returns an observer for `source.subscribe(...)`.
 */
export function operatorObserver<T>(subscriber: Subscriber<unknown>, handlers: OperatorHandlers<T>): Observer<T> {
  const { next, error, complete } = handlers;
  return {
    next: (value) => {
      try {
        next(value);
      } catch (thrown: unknown) {
        subscriber.error(thrown);
      }
    },
    error:
      error === undefined
        ? (failure: unknown) => subscriber.error(failure)
        : (failure: unknown) => {
            try {
              error(failure);
            } catch (thrown: unknown) {
              subscriber.error(thrown);
            }
          },
    complete:
      complete === undefined
        ? () => subscriber.complete()
        : () => {
            try {
              complete();
            } catch (thrown: unknown) {
              subscriber.error(thrown);
            }
          },
  };
}
