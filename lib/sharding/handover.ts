import type { Lease } from '../resources/builtins';
import { placeBuckets } from './placement';
import type { MemberRecord } from './ringLease';

/**
 * The handover rules of a ring, as one pure function of what a member knows: its own state, the
 * other members' Leases as its view shows them, and its clock. `ringMember` feeds it and carries
 * out its plan.
 *
 * The rules (a bucket is *active* on a member while the member serves it):
 * 1. **Claim before serving.** A member serves a bucket only after a write of its own Lease that
 *    lists the bucket has succeeded, and its view has since caught up with that write (the Lease
 *    watch delivers writes in order, so the view then holds every write that came before it).
 * 2. **Serve only unclaimed buckets.** In that view no other Lease may list the bucket.
 * 3. **Stop before unclaiming.** A member stops serving a bucket before any write that drops it
 *    from its Lease, and a member that has not renewed within its renew deadline stops serving
 *    everything at once.
 * 4. **Reap the silent.** A Lease unchanged (on the local clock) for two lease durations is taken
 *    over by a member that wants one of its buckets: holder '', no claims, one more transition,
 *    written with the resourceVersion read, so the silent member's next renewal gets 409.
 *
 * Why no bucket has two servers: of two members serving b, each wrote a claim on b, in some order
 * on the API server, and kept it until it stopped. The later claimer's view caught up with its own
 * write, so it held the earlier claim, and rule 2 stopped it. Rule 4 clears a claim only after
 * two lease durations of silence, by which time its member has stopped by rule 3: that is the
 * clock assumption (no process pause or clock-rate skew longer than the margin), as in client-go.
 *
 * Placement: the live members are the peers whose Lease changed within one lease duration, plus
 * this member; each bucket goes to the one that scores highest on it (`placeBuckets`). A member
 * claims exactly the buckets placed on it, and stops serving any other at once.
 */

/** Another member's Lease as this member's view shows it. */
export interface PeerView {
  readonly record: MemberRecord;
  readonly lease: Lease;
  /** When this member last saw the Lease change, on its own clock. */
  readonly changedAt: number;
}

/** What a member knows about itself. */
export interface SelfView {
  readonly identity: string;
  /**
   * It holds its own Lease, and less than its renew deadline has passed since it sent the last
   * write its view has caught up with (so a member whose view lags stops too).
   */
  readonly live: boolean;
  /** The buckets it serves. */
  readonly active: ReadonlySet<number>;
  /** For each bucket its Lease has listed without interruption: the write that listed it first. */
  readonly claimedAt: ReadonlyMap<number, number>;
  /** The write counter of its own Lease in its view (holder itself), -1 when the view has none. */
  readonly echoedWrite: number;
}

/** Why a bucket placed on this member is not served yet. */
export type WaitReason =
  /** Its claim is not written yet, or the view has not caught up with the write. */
  | { readonly bucket: number; readonly on: 'own-claim' }
  /** Another Lease (`lease`) still claims it. */
  | { readonly bucket: number; readonly on: 'peer-claim'; readonly lease: string };

/** What a member should do now. */
export interface HandoverPlan {
  /** The live members, this one included, sorted. */
  readonly members: readonly string[];
  /** The buckets placed on this member. */
  readonly target: readonly number[];
  /** Stop serving these now (rule 3). */
  readonly release: readonly number[];
  /** Start serving these now (rules 1 and 2). */
  readonly acquire: readonly number[];
  /** The claims its next write should carry. */
  readonly claims: readonly number[];
  /** Silent Leases blocking a bucket of this member's: take them over (rule 4). */
  readonly reap: readonly PeerView[];
  /** Buckets placed here but not served, and why. */
  readonly waiting: readonly WaitReason[];
}

/** The buckets placed on `identity` among `members`. */
export function targetOf(identity: string, members: readonly string[], count: number): number[] {
  return placeBuckets(members, count).flatMap((owner, bucket) => (owner === identity ? [bucket] : []));
}

/** The timing the plan needs. */
export interface HandoverTimings {
  /** A peer whose Lease has not changed for this long is out of the placement. */
  readonly leaseDuration: number;
}

/**
 * The plan of a member at `now`.
 *
 * @param self what the member knows about itself.
 * @param peers the other Leases of the ring in its view (its own excluded).
 * @param now the member's clock.
 * @param count the ring's bucket count.
 * @param timings the lease duration.
 * @param place the buckets placed on this member among sorted `members` (a cache of {@link targetOf}).
 */
export function planHandover(
  self: SelfView,
  peers: readonly PeerView[],
  now: number,
  count: number,
  timings: HandoverTimings,
  place: (members: readonly string[]) => readonly number[] = (members) => targetOf(self.identity, members, count),
): HandoverPlan {
  const live = peers.filter((peer) => peer.record.holder !== '' && peer.record.holder !== self.identity && now < peer.changedAt + timings.leaseDuration);
  const members = [...new Set([self.identity, ...live.map((peer) => peer.record.holder)])].sort();
  const target = place(members);
  const targetSet = new Set(target);

  const release = [...self.active].filter((bucket) => !self.live || !targetSet.has(bucket)).sort((a, b) => a - b);
  // A member that is not live claims nothing: if its writes get through while its view lags, it
  // must not block the others, and it claims afresh once its view has caught up.
  if (!self.live) return { members, target, release, acquire: [], claims: [], reap: [], waiting: target.map((bucket) => ({ bucket, on: 'own-claim' })) };

  const claimedBy = new Map<number, PeerView>();
  for (const peer of peers) for (const bucket of peer.record.claims) if (!claimedBy.has(bucket)) claimedBy.set(bucket, peer);

  const acquire: number[] = [];
  const waiting: WaitReason[] = [];
  const reap = new Set<PeerView>();
  for (const bucket of target) {
    if (self.active.has(bucket)) continue;
    const blocker = claimedBy.get(bucket);
    if (blocker !== undefined) {
      waiting.push({ bucket, on: 'peer-claim', lease: blocker.record.name });
      if (now >= blocker.changedAt + 2 * timings.leaseDuration) reap.add(blocker);
      continue;
    }
    const claimedAt = self.claimedAt.get(bucket);
    if (claimedAt === undefined || self.echoedWrite < claimedAt) waiting.push({ bucket, on: 'own-claim' });
    else acquire.push(bucket);
  }
  return { members, target, release, acquire, claims: target, reap: [...reap], waiting };
}
