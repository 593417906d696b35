import type { Lease } from '../resources/builtins';
import { StatusError } from '../base/errors';

/**
 * The leader-election record inside a Lease's spec, and the few operations the election needs on
 * it: client-go's `LeaderElectionRecord` and its conversions (tools/leaderelection/resourcelock).
 */

/**
 * A Lease's spec with every field the election reads. `strategy` and `preferredHolder`
 * (coordinated leader election, KEP-4355, 1.31+) are newer than the kubernetes-types release the
 * built-in types come from; the record compares them so that a change to them counts as a change.
 */
export type LeaseSpec = NonNullable<Lease['spec']> & { readonly strategy?: string; readonly preferredHolder?: string };

/**
 * A time as a Kubernetes MicroTime: RFC 3339 with exactly six fractional digits
 * (`2006-01-02T15:04:05.000000Z`), which the API server requires of `acquireTime` and `renewTime`.
 */
export function microTime(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * The record as one string, for "has it changed since I last looked": client-go compares the
 * record's JSON bytes, and judges expiry from when they last changed, never from the times
 * written in it (other clocks wrote them).
 */
export function recordText(spec: LeaseSpec | undefined): string {
  return JSON.stringify([
    spec?.holderIdentity ?? '',
    spec?.leaseDurationSeconds ?? 0,
    spec?.acquireTime ?? '',
    spec?.renewTime ?? '',
    spec?.leaseTransitions ?? 0,
    spec?.strategy ?? '',
    spec?.preferredHolder ?? '',
  ]);
}

/** `lease` with `spec` replaced and `labels` merged into its own (client-go's `LeaseLock.Update`). */
export function withSpec(lease: Lease, spec: LeaseSpec, labels: Readonly<Record<string, string>> | undefined): Lease {
  const metadata = labels === undefined ? lease.metadata : { ...lease.metadata, labels: { ...lease.metadata.labels, ...labels } };
  return { ...lease, metadata, spec };
}

/** A new Lease named `name` in `namespace` holding `spec`. */
export function newLease(namespace: string, name: string, spec: LeaseSpec, labels: Readonly<Record<string, string>> | undefined): Lease {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace, ...(labels === undefined ? {} : { labels: { ...labels } }) }, spec };
}

/** True for the API server's 404. */
export function isNotFound(error: unknown): boolean {
  return error instanceof StatusError && error.code === 404;
}

/** True for the API server's 409 Conflict: the object changed since it was read. */
export function isConflict(error: unknown): boolean {
  return error instanceof StatusError && error.code === 409;
}
