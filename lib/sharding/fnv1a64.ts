/**
 * FNV-1a, 64 bits: the hash KEP-5866 (server-side sharded list and watch) puts on an object's
 * uid or namespace (apimachinery `pkg/sharding/hash.go`, `HashField`: Go's `hash/fnv` `New64a`
 * over the field's bytes). Client and server must agree bit for bit, so this is that function,
 * over the UTF-8 bytes of a string, computed in two 32-bit halves: exact in doubles, no BigInt
 * and no allocation for ASCII input (uids and namespaces are ASCII).
 */

/** A 64-bit hash as two unsigned 32-bit halves. */
export interface Hash64 {
  /** The high 32 bits, unsigned. */
  readonly hi: number;
  /** The low 32 bits, unsigned. */
  readonly lo: number;
}

/** FNV's 64-bit offset basis, 0xcbf29ce484222325. */
const OFFSET_HI = 0xcbf29ce4;
const OFFSET_LO = 0x84222325;
/** FNV's 64-bit prime is 2^40 + 0x1b3: a product is `h·0x1b3 + (h << 40)`. */
const PRIME_LOW_PART = 0x1b3;
const TWO_TO_32 = 0x1_0000_0000;

/**
 * The FNV-1a 64-bit hash of `value`'s UTF-8 bytes.
 *
 * ## Example
 * ```ts
 * const { hi, lo } = fnv1a64('a'); // 0xaf63dc4c8601ec8c: hi 0xaf63dc4c, lo 0x8601ec8c
 * ```
 */
export function fnv1a64(value: string): Hash64 {
  let hi = OFFSET_HI;
  let lo = OFFSET_LO;
  let bytes: Uint8Array | undefined;
  let length = value.length;
  for (let i = 0; i < value.length; i++) {
    if (value.charCodeAt(i) >= 0x80) {
      // Not ASCII: hash its UTF-8 encoding (JSON decoding gives Go a lone surrogate as U+FFFD too).
      bytes = Buffer.from(value, 'utf8');
      length = bytes.length;
      break;
    }
  }
  for (let i = 0; i < length; i++) {
    lo = (lo ^ (bytes === undefined ? value.charCodeAt(i) : bytes[i]!)) >>> 0;
    // Every term stays below 2^42, so the sums are exact before they are cut to 32 bits.
    const low = lo * PRIME_LOW_PART;
    hi = (hi * PRIME_LOW_PART + Math.floor(low / TWO_TO_32) + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return { hi, lo };
}

/**
 * `hash` as the 16 lowercase hex digits KEP-5866 writes (apimachinery `HashField`), without `0x`.
 *
 * ## Example
 * ```ts
 * hashHex(fnv1a64('')); // 'cbf29ce484222325'
 * ```
 */
export function hashHex(hash: Hash64): string {
  return hash.hi.toString(16).padStart(8, '0') + hash.lo.toString(16).padStart(8, '0');
}

/** -1, 0 or 1 as `a` is below, equal to or above `b`, as unsigned 64-bit numbers. */
export function compareHash(a: Hash64, b: Hash64): number {
  if (a.hi !== b.hi) return a.hi < b.hi ? -1 : 1;
  if (a.lo !== b.lo) return a.lo < b.lo ? -1 : 1;
  return 0;
}
