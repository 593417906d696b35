/**
 * FNV-1a, 64 bits, as apimachinery `pkg/sharding/hash.go` (`HashField`: Go's `hash/fnv` `New64a`
 * over the field's bytes) computes it, written as the Go is: unsigned 64-bit arithmetic (here
 * BigInt, wrapped to 64 bits) over the UTF-8 bytes, printed as 16 lowercase hex digits.
 *
 * The server owns this copy on purpose, rather than importing rx-informer's: rx-informer computes
 * the same hash in two 32-bit halves for speed, and the sharding specs run rx-informer's shard
 * ranges against this server. Two independent implementations of the API server's function make
 * those specs a cross-check of rx-informer's, where one shared function would agree with itself.
 */

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK_64 = (1n << 64n) - 1n;

/** The FNV-1a 64-bit hash of `value`'s UTF-8 bytes, as 16 lowercase hex digits (no `0x`). */
export function fnv1a64Hex(value: string): string {
  let hash = OFFSET_BASIS;
  for (const byte of Buffer.from(value, 'utf8')) hash = ((hash ^ BigInt(byte)) * PRIME) & MASK_64;
  return hash.toString(16).padStart(16, '0');
}
