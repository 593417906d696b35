import { asyncScheduler } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import { defaultLogger } from '../base/logger';
import type { Logger } from '../base/logger';
import { MAX_TIMER_MS } from '../base/longDelays';
import { defaultResourceGoneBackoffConfig, resolveBackoffConfig } from './backoff';
import type { BackoffConfig } from './backoff';
import { watchIdleMs } from './requestOptions';

/** Options of `reflect` and `reflectorEvents`. Every field is optional. */
export interface ReflectConfig {
  /** The informer's name, in every log line as `informer`. Default `'informer'`. */
  name?: string;
  /** Runs every timer (backoff, idle timeout, bookmark wait). Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
  /** Values in [0, 1): backoff jitter and the watch `timeoutSeconds` draw. Default `Math.random`. */
  random?: () => number;
  /** Retry delays. Default: 800 ms doubling to a 30 s cap, each wait in [d, 2d), reset after 2 min without a failure. */
  backoff?: BackoffConfig;
  /**
   * Retry delays while the resource is not served (a 404 on its list or watch: its CRD deleted or
   * not yet installed): its own sequence, apart from `backoff`'s. Default: 5 s doubling to a 2 min
   * cap, each wait in [d, 2d), started over once the resource is served again.
   */
  resourceGoneBackoff?: BackoffConfig;
  /**
   * Items per list page (`limit`), and per Replace page of a streaming list. Default 500. 0 lists
   * unpaged (a streaming list then still emits pages of 500).
   */
  pageSize?: number;
  /**
   * A list that delivers no page for this long (ms) is presumed dead (a connection that stopped
   * without closing), abandoned and retried after backoff. Counted per page, so with `pageSize: 0`
   * it bounds the whole list. Default 60_000.
   */
  listPageTimeoutMs?: number;
  /**
   * List with a streaming list (`sendInitialEvents`), falling back to paged lists when the server
   * cannot serve one. Default: true when the lister-watcher says it passes streaming lists on to
   * an API server (`supportsStreamingList`, as `kubeListerWatcher` does), else false.
   */
  streamingList?: boolean;
  /** Bounded wait (ms) for a streaming list's initial-events-end bookmark. Default 60_000. */
  initialEventsTimeoutMs?: number;
  /** Range of the server-side watch `timeoutSeconds`, drawn per watch from [min, max). Default [300, 600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** Where log lines go (pino-compatible). Default `defaultLogger`: warnings and errors to stderr; `silentLogger` for none. */
  logger?: Logger;
}

/** A {@link ReflectConfig} checked, with every default filled in. */
export type ReflectSettings = ReturnType<typeof resolveReflectConfig>;

/**
 * Fills in the defaults and checks the ranges: every timer must fit a Node timer, including the
 * idle timeout of the longest watch.
 * @throws RangeError for a value out of range.
 */
export function resolveReflectConfig(config: ReflectConfig, supportsStreamingList: boolean) {
  const pageSize = config.pageSize ?? 500;
  const initialEventsTimeoutMs = config.initialEventsTimeoutMs ?? 60_000;
  const listPageTimeoutMs = config.listPageTimeoutMs ?? 60_000;
  const watchTimeoutSeconds = config.watchTimeoutSeconds ?? { min: 300, max: 600 };
  if (!Number.isInteger(pageSize) || pageSize < 0) throw new RangeError(`reflect pageSize must be an integer >= 0, got ${pageSize}`);
  if (!(initialEventsTimeoutMs > 0 && initialEventsTimeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(`reflect initialEventsTimeoutMs must be in (0, ${MAX_TIMER_MS}], got ${initialEventsTimeoutMs}`);
  }
  if (!(listPageTimeoutMs > 0 && listPageTimeoutMs <= MAX_TIMER_MS)) {
    throw new RangeError(`reflect listPageTimeoutMs must be in (0, ${MAX_TIMER_MS}], got ${listPageTimeoutMs}`);
  }
  const { min, max } = watchTimeoutSeconds;
  if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1 || max < min || watchIdleMs(max) > MAX_TIMER_MS) {
    throw new RangeError(`reflect watchTimeoutSeconds must be integers with 1 <= min <= max <= 2147478, got [${min}, ${max})`);
  }
  return {
    name: config.name ?? 'informer',
    scheduler: config.scheduler ?? asyncScheduler,
    random: config.random ?? Math.random,
    backoff: resolveBackoffConfig(config.backoff),
    resourceGoneBackoff: resolveBackoffConfig(config.resourceGoneBackoff, defaultResourceGoneBackoffConfig),
    pageSize,
    streamingList: config.streamingList ?? supportsStreamingList,
    initialEventsTimeoutMs,
    listPageTimeoutMs,
    watchTimeoutSeconds: { min, max },
    logger: config.logger ?? defaultLogger,
  };
}
