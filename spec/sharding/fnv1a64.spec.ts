import fc from 'fast-check';
import { compareHash, fnv1a64, hashHex } from '../../lib/sharding/fnv1a64';

/** The textbook definition over BigInt, byte by byte: the reference the fast version must match. */
function reference(value: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(value, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

describe('fnv1a64', () => {
  it("matches Go's hash/fnv New64a golden vectors, the hash apimachinery's pkg/sharding HashField uses", () => {
    // Go's src/hash/fnv/fnv_test.go, golden64a.
    expect(hashHex(fnv1a64(''))).toBe('cbf29ce484222325');
    expect(hashHex(fnv1a64('a'))).toBe('af63dc4c8601ec8c');
    expect(hashHex(fnv1a64('ab'))).toBe('089c4407b545986a');
    expect(hashHex(fnv1a64('abc'))).toBe('e71fa2190541574b');
  });

  it('matches the FNV reference suite (test_fnv.c) on a longer input', () => {
    expect(hashHex(fnv1a64('foobar'))).toBe('85944171f73967e8');
  });

  it('agrees with a BigInt implementation on any string, non-ASCII and lone surrogates included', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uuid(), fc.string({ unit: 'binary' })), (value) => {
        expect(hashHex(fnv1a64(value))).toBe(reference(value));
      }),
      { numRuns: 2_000 },
    );
  });

  it('hashes a uid to 16 hex digits, as KEP-5866 echoes them', () => {
    expect(hashHex(fnv1a64('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'))).toMatch(/^[0-9a-f]{16}$/);
  });

  it('orders hashes as unsigned 64-bit numbers', () => {
    expect(compareHash({ hi: 0xffffffff, lo: 0 }, { hi: 1, lo: 0xffffffff })).toBe(1);
    expect(compareHash({ hi: 1, lo: 2 }, { hi: 1, lo: 3 })).toBe(-1);
    expect(compareHash({ hi: 7, lo: 7 }, { hi: 7, lo: 7 })).toBe(0);
  });
});
