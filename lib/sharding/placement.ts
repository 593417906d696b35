import { fnv1a64 } from './fnv1a64';

/**
 * Which member owns which bucket: rendezvous (highest random weight) hashing. Each bucket goes to
 * the member with the highest score, `fnv1a64(member + "\0" + bucket)` put through splitmix64's
 * finalizer, ties broken by the greater identity. (FNV-1a alone mixes its last bytes into the
 * low bits only: members `replica-1`, `replica-2` ... would score alike and one would win most
 * buckets.) Every member computes it alone from the member set, and two members with the same set
 * agree. When a member joins, it takes each bucket it now scores highest on (about 1/(N+1) of
 * them, from everyone); when one leaves, exactly its buckets move, each to the member that
 * scored second on it. No ring, no virtual nodes: the spread is that of the hash, more even than
 * a virtual-node ring's (redis/go-redis#1299 compares the two).
 * Cost: members × buckets hashes per member-set change (64 buckets × 10 members: 640).
 */

const MASK_64 = (1n << 64n) - 1n;

/** A member's score for a bucket: the higher, the likelier it owns the bucket. */
export function rendezvousScore(member: string, bucket: number): bigint {
  const { hi, lo } = fnv1a64(`${member}\u0000${bucket}`);
  // splitmix64's finalizer (Steele, Lea, Flood 2014): every input bit reaches every output bit.
  let z = (BigInt(hi) << 32n) | BigInt(lo);
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
  return z ^ (z >> 31n);
}

/**
 * The owner of each bucket: `owners[b]` is the member that owns bucket `b`, or undefined when
 * there are no members.
 *
 * ## Example
 * ```ts
 * const owners = placeBuckets(['replica-a', 'replica-b', 'replica-c'], 64);
 * const mine = owners.flatMap((owner, bucket) => (owner === 'replica-b' ? [bucket] : []));
 * ```
 */
export function placeBuckets(members: Iterable<string>, count: number): (string | undefined)[] {
  const candidates = [...new Set(members)];
  const owners: (string | undefined)[] = [];
  for (let bucket = 0; bucket < count; bucket++) {
    let best: string | undefined;
    let bestScore = -1n;
    for (const member of candidates) {
      const score = rendezvousScore(member, bucket);
      if (score > bestScore || (score === bestScore && best !== undefined && member > best)) {
        best = member;
        bestScore = score;
      }
    }
    owners.push(best);
  }
  return owners;
}

/** The buckets `member` owns among `members`, in order. */
export function bucketsOf(member: string, members: Iterable<string>, count: number): number[] {
  return placeBuckets(members, count).flatMap((owner, bucket) => (owner === member ? [bucket] : []));
}
