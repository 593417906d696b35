import type { ServerVersion } from './objectClient';

/**
 * Ordering resourceVersions where the server promises it. They are opaque strings by contract
 * (ARCHITECTURE.md, PROTOCOL.md B.3): compare them for equality only, except that from Kubernetes
 * 1.35 the versions of one resource are comparable as integers (KEP-5504, a conformance
 * requirement for built-in and custom resources served by kube-apiserver). apimachinery's
 * `pkg/util/resourceversion.CompareResourceVersions` is the reference: a well-formed version is
 * non-empty, digits only, without a leading 0; anything else cannot be ordered.
 */

const WELL_FORMED = /^[1-9][0-9]*$/;

/**
 * Orders two resourceVersions of one resource: -1, 0 or 1 as the integers they spell compare
 * (of any length), or `undefined` when either is not well-formed and so cannot be ordered. Only
 * meaningful for versions from a server that promises the order ({@link ordersResourceVersions}).
 *
 * ## Example
 * ```ts
 * import { compareResourceVersions } from 'rx-informer/controller';
 *
 * compareResourceVersions('9', '10'); // -1
 * compareResourceVersions('abc', '10'); // undefined: compare for equality instead
 * ```
 */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (!WELL_FORMED.test(a) || !WELL_FORMED.test(b)) return undefined;
  // Without leading zeros a longer string is a larger number; equal lengths compare as text.
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/**
 * Whether a server of this version promises ordered resourceVersions: Kubernetes 1.35 and later
 * (KEP-5504). `minor` may carry a provider's suffix (`"35+"`). An answer that does not parse
 * promises nothing.
 *
 * ## Example
 * ```ts
 * import { ordersResourceVersions } from 'rx-informer/controller';
 *
 * ordersResourceVersions({ major: '1', minor: '35+' }); // true
 * ordersResourceVersions({ major: '1', minor: '34' }); // false
 * ```
 */
export function ordersResourceVersions(version: ServerVersion): boolean {
  const major = /^[0-9]+$/.test(version.major) ? Number(version.major) : NaN;
  const minorDigits = /^[0-9]+/.exec(version.minor)?.[0];
  const minor = minorDigits === undefined ? NaN : Number(minorDigits);
  if (Number.isNaN(major) || Number.isNaN(minor)) return false;
  return major > 1 || (major === 1 && minor >= 35);
}
