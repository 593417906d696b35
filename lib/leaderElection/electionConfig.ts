import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../base/logger';
import { longDelays } from '../base/longDelays';

/**
 * Leader election's settings, their defaults and the checks client-go makes before it runs
 * (tools/leaderelection/leaderelection.go, `NewLeaderElector`).
 */

/** How much later than `retryPeriod` an acquire attempt may come: up to 120 % (client-go's `JitterFactor`). */
export const JITTER_FACTOR = 1.2;

/** Options of {@link leaderElection}. Durations are milliseconds. */
export interface LeaderElectionOptions {
  /** Namespace of the Lease. */
  readonly namespace: string;
  /** Name of the Lease: one per group of candidates (usually the controller's name). */
  readonly name: string;
  /** This candidate's identity, unique among the candidates (the pod name, or host + a random suffix). */
  readonly identity: string;
  /**
   * How long others must see the Lease unchanged before taking it over, timed by their own clock
   * from when they last saw it change. Written to the Lease in whole seconds, so at least
   * 1000. Default 15 000.
   */
  readonly leaseDuration?: number;
  /**
   * How long the leader keeps trying to renew before it stops leading. Must be below
   * `leaseDuration`; the gap (less `retryPeriod`) is the safety margin against two leaders.
   * Default 10 000.
   */
  readonly renewDeadline?: number;
  /** Time between attempts; acquire attempts are jittered up to 120 % later. `renewDeadline` must exceed 1.2 × this. Default 2 000. */
  readonly retryPeriod?: number;
  /**
   * Each Lease request is abandoned after this, so a hung request cannot outlive the renew
   * deadline (kubernetes/kubernetes#124588). Default `renewDeadline / 2`, which leaves room for a
   * retry before the deadline (kubernetes/kubernetes#98059); must be below `renewDeadline`.
   */
  readonly requestTimeout?: number;
  /**
   * Give the Lease up when the subscription ends while leading (holder '' and a 1 s duration), so
   * another candidate takes over at once instead of after `leaseDuration`. Default true.
   */
  readonly releaseOnUnsubscribe?: boolean;
  /** Labels set on the Lease (merged into existing ones), e.g. to find the Leases of a group with a selector. */
  readonly labels?: Readonly<Record<string, string>>;
  /** Runs every timer and reads the clock. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Where elections, losses and failed requests are logged. Default `defaultLogger`: warnings and errors to stderr; `silentLogger` for none. */
  readonly logger?: Logger;
  /** Source of the acquire jitter, uniform in [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

/** {@link LeaderElectionOptions} with every default filled in and checked. */
export type ElectionConfig = Required<Omit<LeaderElectionOptions, 'labels'>> & Pick<LeaderElectionOptions, 'labels'>;

/**
 * The check leader election adds to client-go's: a leader stops leading at most `retryPeriod +
 * renewDeadline` after it sent its last successful renewal, and others take over no earlier than
 * `leaseDuration` after they saw it, so `leaseDuration` must exceed the sum or two candidates may
 * lead at once with nothing paused or skewed. (Ring members hand buckets over on two lease
 * durations and need not pass it.)
 *
 * @throws RangeError unless leaseDuration > renewDeadline + retryPeriod.
 */
export function checkLeaderMargin(config: Pick<ElectionConfig, 'leaseDuration' | 'renewDeadline' | 'retryPeriod'>): void {
  const { leaseDuration, renewDeadline, retryPeriod } = config;
  if (leaseDuration <= renewDeadline + retryPeriod) {
    throw new RangeError(`leaseDuration (${leaseDuration}) must be greater than renewDeadline + retryPeriod (${renewDeadline + retryPeriod}): a leader stops that long after its last renewal`);
  }
}

/**
 * Fills in the defaults and makes client-go's checks.
 *
 * @throws TypeError when `namespace`, `name` or `identity` is empty.
 * @throws RangeError unless leaseDuration > renewDeadline > 1.2 × retryPeriod > 0,
 *   leaseDuration >= 1000, and 0 < requestTimeout < renewDeadline.
 */
export function resolveElectionConfig(options: LeaderElectionOptions): ElectionConfig {
  for (const field of ['namespace', 'name', 'identity'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '') throw new TypeError(`leader election needs a non-empty ${field}`);
  }
  const leaseDuration = options.leaseDuration ?? 15_000;
  const renewDeadline = options.renewDeadline ?? 10_000;
  const retryPeriod = options.retryPeriod ?? 2_000;
  const requestTimeout = options.requestTimeout ?? renewDeadline / 2;
  for (const [field, value] of Object.entries({ leaseDuration, renewDeadline, retryPeriod, requestTimeout })) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${field} must be a finite number of ms > 0, got ${value}`);
  }
  if (leaseDuration < 1000) throw new RangeError(`leaseDuration is written in whole seconds: it must be at least 1000 ms, got ${leaseDuration}`);
  if (leaseDuration <= renewDeadline) throw new RangeError(`leaseDuration (${leaseDuration}) must be greater than renewDeadline (${renewDeadline})`);
  if (renewDeadline <= JITTER_FACTOR * retryPeriod) {
    throw new RangeError(`renewDeadline (${renewDeadline}) must be greater than retryPeriod × ${JITTER_FACTOR} (${JITTER_FACTOR * retryPeriod})`);
  }
  if (requestTimeout >= renewDeadline) throw new RangeError(`requestTimeout (${requestTimeout}) must be below renewDeadline (${renewDeadline})`);
  return {
    namespace: options.namespace,
    name: options.name,
    identity: options.identity,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    requestTimeout,
    releaseOnUnsubscribe: options.releaseOnUnsubscribe ?? true,
    labels: options.labels,
    // Every timer of the election (retries, the renew deadline, request timeouts) honours
    // durations past what one Node timer holds.
    scheduler: longDelays(options.scheduler ?? asyncScheduler),
    logger: options.logger ?? defaultLogger,
    random: options.random ?? Math.random,
  };
}
