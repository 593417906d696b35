import { hostname } from 'node:os';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import { EVENT_LIMITS, isQualifiedName } from './eventObjects';

/**
 * The event recorder's settings and their defaults: client-go's, from `tools/events`
 * (`event_broadcaster.go`: the queue, the series timings, the retries) and `tools/record`
 * (`events_cache.go`: the spam filter, the cache size). Durations are milliseconds.
 */

/** Options of {@link eventRecorder}. Only `reportingController` is required. */
export interface EventRecorderOptions {
  /**
   * The controller that reports, as a qualified name (`example.com/widget-controller`): the
   * Events' `reportingController`, what `kubectl describe` shows as "From". Required.
   */
  readonly reportingController: string;
  /** This replica: `reportingInstance`. Default `<reportingController>-<hostname>`, cut to 128 characters (client-go's). */
  readonly reportingInstance?: string;
  /**
   * Writes waiting (to be sent, or to be retried) at most; a write beyond it is dropped and
   * counted (`stats().dropped`, a `'dropped'` report). Default 1 000 (`maxQueuedEvents`, the
   * length of client-go's broadcaster channel, which drops when full).
   */
  readonly maxQueued?: number;
  /** Events remembered for series, least recently seen forgotten first. Default 4 096 (`tools/record`'s LRU). */
  readonly maxCached?: number;
  /**
   * Spam filter: events (first occurrences and series starts, the ones that cost a write) a
   * reporter may write about one object in a burst. Default 25 (`defaultSpamBurst`).
   */
  readonly spamBurst?: number;
  /** Spam filter: tokens regained per second and object. Default 1/300, one every 5 minutes (`defaultSpamQPS`). */
  readonly spamRefillPerSecond?: number;
  /** A series not seen for this long has ended: its count is written one last time and it is forgotten. Default 360 000, 6 minutes (`finishTime`). */
  readonly seriesFinishAfter?: number;
  /** How often the counts of running series are written. Default 1 800 000, 30 minutes (`refreshTime`). */
  readonly seriesRefreshInterval?: number;
  /** Attempts per write before it is given up. Default 12 (`maxTriesPerEvent`). */
  readonly maxTries?: number;
  /** Wait before a retry, drawn from [d, 1.25 d) (`wait.Jitter(10s, 0.25)`). Default 10 000. */
  readonly retryDelay?: number;
  /** A write not answered within this fails and is retried. Default 30 000. */
  readonly requestTimeout?: number;
  /**
   * Stops the recorder: from the abort on, `record` drops (counted), and `writes$` writes what
   * is waiting and the last counts of running series, once each, then completes. Default none.
   */
  readonly signal?: AbortSignal;
  /** How long the flush after `signal` aborts may take; what is left then is dropped (counted). Default 10 000. */
  readonly flushTimeout?: number;
  /** Runs every timer and reads the clock. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /**
   * Where failed writes are logged (warn while retried, error when given up). Default
   * `defaultLogger`: warnings and errors on stderr, as every stage's default; `silentLogger` opts out.
   */
  readonly logger?: Logger;
  /** Source of the retry jitter, uniform in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

/** {@link EventRecorderOptions} with every default filled in and checked. */
export type RecorderConfig = Required<Omit<EventRecorderOptions, 'signal'>> & Pick<EventRecorderOptions, 'signal'>;

/**
 * Fills in the defaults and checks what the API server would refuse on every Event.
 *
 * @throws TypeError for a `reportingController` that is not a qualified name, or an empty or
 *   too long `reportingInstance`.
 * @throws RangeError for a count or duration that is not positive (`maxQueued`, `maxCached`,
 *   `spamBurst`, `maxTries`: integers) or a negative `spamRefillPerSecond`.
 */
export function recorderConfig(options: EventRecorderOptions): RecorderConfig {
  const { reportingController } = options;
  if (typeof reportingController !== 'string' || !isQualifiedName(reportingController)) {
    throw new TypeError(`reportingController must be a qualified name like "example.com/my-controller", not ${JSON.stringify(reportingController)}`);
  }
  const reportingInstance = options.reportingInstance ?? `${reportingController}-${hostname()}`.slice(0, EVENT_LIMITS.reportingInstance);
  if (reportingInstance === '' || reportingInstance.length > EVENT_LIMITS.reportingInstance) {
    throw new TypeError(`reportingInstance must have 1 to ${EVENT_LIMITS.reportingInstance} characters`);
  }
  const config: RecorderConfig = {
    reportingController,
    reportingInstance,
    maxQueued: options.maxQueued ?? 1000,
    maxCached: options.maxCached ?? 4096,
    spamBurst: options.spamBurst ?? 25,
    spamRefillPerSecond: options.spamRefillPerSecond ?? 1 / 300,
    seriesFinishAfter: options.seriesFinishAfter ?? 6 * 60_000,
    seriesRefreshInterval: options.seriesRefreshInterval ?? 30 * 60_000,
    maxTries: options.maxTries ?? 12,
    retryDelay: options.retryDelay ?? 10_000,
    requestTimeout: options.requestTimeout ?? 30_000,
    flushTimeout: options.flushTimeout ?? 10_000,
    scheduler: options.scheduler ?? asyncScheduler,
    logger: options.logger ?? defaultLogger,
    random: options.random ?? Math.random,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  for (const name of ['maxQueued', 'maxCached', 'spamBurst', 'maxTries'] as const) {
    if (!Number.isInteger(config[name]) || config[name] < 1) throw new RangeError(`${name} must be a positive integer, got ${config[name]}`);
  }
  for (const name of ['seriesFinishAfter', 'seriesRefreshInterval', 'retryDelay', 'requestTimeout', 'flushTimeout'] as const) {
    if (!Number.isFinite(config[name]) || config[name] <= 0) throw new RangeError(`${name} must be a positive number of ms, got ${config[name]}`);
  }
  if (!Number.isFinite(config.spamRefillPerSecond) || config.spamRefillPerSecond < 0) {
    throw new RangeError(`spamRefillPerSecond must be a finite number >= 0, got ${config.spamRefillPerSecond}`);
  }
  return config;
}
