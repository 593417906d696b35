import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultBackoffConfig, type BackoffConfig } from '../reflector/backoff';
import { resolveElectionConfig } from '../leaderElection/electionConfig';
import { defaultLogger, type Logger } from '../base/logger';
import { longDelays } from '../base/longDelays';
import { MAX_BUCKETS } from './buckets';
import { memberLeaseName } from './ringLease';

/** Where a ring's Leases live: one Lease per member, in `namespace`, labelled with `name`. */
export interface RingRef {
  /** The ring's name: a label value (at most 63 characters: letters, digits, `-`, `_`, `.`). One ring per sharded resource. */
  readonly name: string;
  /** The namespace of the members' Leases (usually the controller's own). */
  readonly namespace: string;
}

/** Options of a ring member. Durations are milliseconds. */
export interface RingMemberOptions {
  /** The ring to join. */
  readonly ring: RingRef;
  /** This replica's identity, unique among the ring's live members (the pod name). */
  readonly identity: string;
  /** How many buckets the hash space is cut into: the unit that moves between members. Default 64, at most 65 536. */
  readonly buckets?: number;
  /**
   * A member whose Lease has not changed for this long (on the observer's clock) leaves the
   * placement; after twice this long its Lease is taken over and its buckets move. Written to
   * the Lease in whole seconds, so at least 1000. Default 15 000.
   */
  readonly leaseDuration?: number;
  /**
   * A member that has not renewed (and seen its renewal in its view) for this long stops serving
   * every bucket. Must be below `leaseDuration`. Default 10 000.
   */
  readonly renewDeadline?: number;
  /** How often a member renews its Lease and re-plans. `renewDeadline` must exceed 1.2 × this. Default 2 000. */
  readonly retryPeriod?: number;
  /** Each Lease request is abandoned after this. Default `renewDeadline / 2`. */
  readonly requestTimeout?: number;
  /** Runs every timer and reads the clock. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
  /** Where joins, handovers and failures are logged. Default `defaultLogger`: warnings and errors to stderr; `silentLogger` for none. */
  readonly logger?: Logger;
}

/** {@link RingMemberOptions} with every default filled in and checked. */
export interface RingMemberConfig {
  readonly ring: RingRef;
  readonly identity: string;
  readonly leaseName: string;
  readonly buckets: number;
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  readonly requestTimeout: number;
  readonly scheduler: SchedulerLike;
  readonly logger: Logger;
}

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

/**
 * Fills in the defaults and checks them, with leader election's timing rules
 * (leaseDuration > renewDeadline > 1.2 × retryPeriod).
 *
 * @throws TypeError for a ring name that is not a label value, an empty namespace or identity,
 *   or a Lease name (`<ring>-<identity>`) that is not a DNS subdomain.
 * @throws RangeError for a bucket count outside [1, 65 536] or timings that break the rules.
 */
export function resolveRingConfig(options: RingMemberOptions): RingMemberConfig {
  const { ring, identity } = options;
  if (typeof ring?.name !== 'string' || !LABEL_VALUE.test(ring.name)) throw new TypeError(`a ring name must be a label value (63 characters at most), got ${JSON.stringify(ring?.name)}`);
  const leaseName = memberLeaseName(ring.name, identity);
  if (typeof identity !== 'string' || identity === '' || !DNS_SUBDOMAIN.test(leaseName)) {
    throw new TypeError(`the member Lease name ${JSON.stringify(leaseName)} (<ring>-<identity>) must be a lowercase DNS subdomain`);
  }
  const buckets = options.buckets ?? 64;
  if (!Number.isInteger(buckets) || buckets < 1 || buckets > MAX_BUCKETS) throw new RangeError(`buckets must be an integer in [1, ${MAX_BUCKETS}], got ${buckets}`);
  const timings = resolveElectionConfig({
    namespace: ring.namespace,
    name: leaseName,
    identity,
    leaseDuration: options.leaseDuration,
    renewDeadline: options.renewDeadline,
    retryPeriod: options.retryPeriod,
    requestTimeout: options.requestTimeout,
  });
  return {
    ring,
    identity,
    leaseName,
    buckets,
    leaseDuration: timings.leaseDuration,
    renewDeadline: timings.renewDeadline,
    retryPeriod: timings.retryPeriod,
    requestTimeout: timings.requestTimeout,
    // The member's timers (renewals, its deadline, request timeouts) honour any duration.
    scheduler: longDelays(options.scheduler ?? asyncScheduler),
    logger: options.logger ?? defaultLogger,
  };
}

/**
 * The retry policy of a member's view of the ring (its Lease informer): client-go's reflector
 * backoff, capped at the ring's try period instead of 30 s. A member serves only the buckets its
 * view places on it, so while that view waits out a reflector backoff the member cannot take its
 * buckets back, nor can anyone else (the placement still names it): after a partition long enough
 * for the default backoff to reach its 30 s cap, the view's next list comes 30–60 s after the
 * partition heals, leaving those buckets unowned past any lease-based bound. Capped at
 * `retryPeriod`, the view retries as often as the member's own Lease loop does (each wait in
 * [d, 2d), so at most two try periods), which a ring of a few dozen members can afford.
 */
export function ringViewBackoff(config: Pick<RingMemberConfig, 'retryPeriod'>): BackoffConfig {
  return { initialMs: Math.min(defaultBackoffConfig.initialMs, config.retryPeriod), maxMs: config.retryPeriod };
}
