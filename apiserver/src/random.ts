/**
 * Small deterministic randomness helpers for the churn generator and tests. Nothing here is fit
 * for security: the point is that one seed always replays the same sequence.
 */

/** A source of numbers in [0, 1), like `Math.random`. */
export type Random = () => number;

/**
 * A deterministic generator in [0, 1): the same seed gives the same sequence on every platform.
 *
 * It hashes a counter advanced by the golden-ratio constant (a Weyl sequence) through the
 * MurmurHash3 32-bit finaliser. That is tiny, allocation-free and well enough distributed for
 * picking pods, names and phases; it is not a cryptographic generator.
 *
 * ## Example
 * ```ts
 * import { seededRandom } from 'rx-informer-apiserver';
 *
 * const random = seededRandom(42);
 * const first = random(); // same value every run
 * ```
 */
export function seededRandom(seed: number): Random {
  let counter = (Math.trunc(seed) ^ 0x5bd1e995) >>> 0;
  return () => {
    counter = (counter + 0x9e3779b9) >>> 0;
    let z = counter;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  };
}

/** An integer in [0, n). */
export function randomInt(random: Random, n: number): number {
  return Math.floor(random() * n);
}

/** One element of a non-empty array. */
export function pick<T>(random: Random, items: readonly T[]): T {
  return items[randomInt(random, items.length)] as T;
}

/** `length` characters drawn from `alphabet`. */
export function randomString(random: Random, alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet.charAt(randomInt(random, alphabet.length));
  return out;
}

/** `length` lower-case hex digits; draws 32 bits per 8 digits, so 64 digits cost 8 draws. */
export function randomHex(random: Random, length: number): string {
  let out = '';
  while (out.length < length) out += Math.floor(random() * 4294967296).toString(16).padStart(8, '0');
  return out.slice(0, length);
}

/** FNV-1a 32-bit hash of a string: derives stable values (hashes, uids) from names without a draw. */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
