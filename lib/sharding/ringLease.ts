import type { Lease } from '../resources/builtins';
import { microTime, recordText, type LeaseSpec } from '../leaderElection/leaseRecord';
import { formatBuckets, parseBuckets } from './buckets';

/**
 * A ring member's Lease: how a replica announces itself and the buckets it claims, as plain
 * Kubernetes data any member (or `kubectl get leases -l rx-informer.io/ring=NAME`) can read.
 *
 * ```yaml
 * metadata:
 *   name: shop-pods-replica-1              # <ring>-<identity>
 *   labels: { rx-informer.io/ring: shop-pods }
 *   annotations:
 *     rx-informer.io/buckets: 0-3,17,40-44   # the buckets it serves or is about to serve
 *     rx-informer.io/bucket-count: "64"
 *     rx-informer.io/write: "118"            # counts this member's writes
 * spec: { holderIdentity: replica-1, leaseDurationSeconds: 15, renewTime: ..., leaseTransitions: 0 }
 * ```
 *
 * A Lease whose holder is '' has been released (by its member on the way out, or by another
 * member that took it over after it went silent: then `rx-informer.io/reaped-by` names that one).
 */

/** The label that puts a Lease in a ring: `rx-informer.io/ring=<ring>`. */
export const RING_LABEL = 'rx-informer.io/ring';
/** The annotation listing the buckets a member claims (`0-3,7`). */
export const BUCKETS_ANNOTATION = 'rx-informer.io/buckets';
/** The annotation with the ring's bucket count as the member sees it; members that disagree block each other. */
export const BUCKET_COUNT_ANNOTATION = 'rx-informer.io/bucket-count';
/** The annotation counting the member's writes, so it can tell which of its writes a view has seen. */
export const WRITE_ANNOTATION = 'rx-informer.io/write';
/** The annotation naming the member that took a silent member's Lease over. */
export const REAPED_BY_ANNOTATION = 'rx-informer.io/reaped-by';

/** What one member's Lease says, as read from a view. */
export interface MemberRecord {
  /** The Lease's name. */
  readonly name: string;
  /** `spec.holderIdentity`; '' when the Lease was released or reaped. */
  readonly holder: string;
  /**
   * The buckets the Lease claims. A claim that cannot be read (a garbled annotation, another bucket
   * count) claims every bucket: an unreadable member must block, never be ignored.
   */
  readonly claims: readonly number[];
  /** Why the claims could not be read, if they could not. */
  readonly problem: string | undefined;
  /** The member's write counter, 0 when absent. */
  readonly write: number;
  /** `spec.leaseTransitions`. */
  readonly transitions: number;
  /** Everything that changes when the member writes, as one string: unchanged text means a silent member. */
  readonly text: string;
}

/** Reads a ring Lease; `count` is the ring's bucket count. */
export function readMember(lease: Lease, count: number): MemberRecord {
  const annotations = lease.metadata.annotations ?? {};
  const claimsText = annotations[BUCKETS_ANNOTATION] ?? '';
  const countText = annotations[BUCKET_COUNT_ANNOTATION];
  let claims: readonly number[] | undefined = parseBuckets(claimsText, count);
  let problem: string | undefined;
  if (countText !== undefined && countText !== String(count)) {
    problem = `it divides the ring into ${countText} buckets, this member into ${count}`;
    claims = undefined;
  } else if (claims === undefined) problem = `its ${BUCKETS_ANNOTATION} annotation is not a bucket list: ${JSON.stringify(claimsText.slice(0, 100))}`;
  const holder = lease.spec?.holderIdentity ?? '';
  const everything = Array.from({ length: count }, (_, bucket) => bucket);
  return {
    name: lease.metadata.name,
    holder,
    // A released Lease claims nothing, whatever is left in its annotations.
    claims: holder === '' ? [] : (claims ?? everything),
    problem: holder === '' ? undefined : problem,
    write: Number(annotations[WRITE_ANNOTATION] ?? 0) || 0,
    transitions: lease.spec?.leaseTransitions ?? 0,
    text: `${recordText(lease.spec)}${claimsText}\u0000${annotations[WRITE_ANNOTATION] ?? ''}`,
  };
}

/** What a member writes into its own Lease. */
export interface OwnRecord {
  readonly identity: string;
  readonly claims: readonly number[];
  readonly count: number;
  readonly write: number;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: string;
  readonly transitions: number;
  readonly now: number;
}

/** `lease` (or a new Lease named `name`) carrying `record`, with the ring label; other labels and annotations are kept. */
export function ownLease(base: Lease | undefined, namespace: string, name: string, ring: string, record: OwnRecord): Lease {
  const metadata = base?.metadata ?? { name, namespace };
  const spec: LeaseSpec = {
    holderIdentity: record.identity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime,
    renewTime: microTime(record.now),
    leaseTransitions: record.transitions,
  };
  const annotations = { ...metadata.annotations };
  delete annotations[REAPED_BY_ANNOTATION];
  annotations[BUCKETS_ANNOTATION] = formatBuckets(record.claims);
  annotations[BUCKET_COUNT_ANNOTATION] = String(record.count);
  annotations[WRITE_ANNOTATION] = String(record.write);
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...metadata, labels: { ...metadata.labels, [RING_LABEL]: ring }, annotations },
    spec,
  };
}

/**
 * `lease` released: holder '', no claims, a 1 s duration (client-go's release), one more
 * transition when another member takes it (`reaper`), so the silent member's next renewal meets a
 * 409 and learns it was replaced.
 */
export function releasedLease(lease: Lease, now: number, reaper: string | undefined): Lease {
  const annotations: Record<string, string> = { ...lease.metadata.annotations, [BUCKETS_ANNOTATION]: '' };
  if (reaper !== undefined) annotations[REAPED_BY_ANNOTATION] = reaper;
  const transitions = (lease.spec?.leaseTransitions ?? 0) + (reaper === undefined ? 0 : 1);
  const time = microTime(now);
  return {
    ...lease,
    metadata: { ...lease.metadata, annotations },
    spec: { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: time, renewTime: time, leaseTransitions: transitions },
  };
}

/** The Lease name of `identity` in `ring`. */
export function memberLeaseName(ring: string, identity: string): string {
  return `${ring}-${identity}`;
}
