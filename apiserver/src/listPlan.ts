import type { ListQuery } from './listOptions';
import type { ServerProfile } from './serverVersion';

/**
 * Where the API server serves a list from, and how, by its query and version: the decision of the
 * apiserver's cacher (`pkg/storage/cacher/cacher.go` `shouldDelegateList` and `computeListLimit`
 * up to 1.32, `delegator.go` `ShouldDelegateList` from 1.33) read against the "semantics for get
 * and list" table of PROTOCOL.md B.2.
 *
 * | query                                          | served from            | state             | `limit`   |
 * |------------------------------------------------|------------------------|-------------------|-----------|
 * | `continue`                                     | etcd                   | at the token's rv | honoured  |
 * | `resourceVersionMatch=Exact`, or `limit` + rv X | etcd (1.34+: snapshot) | at X              | honoured  |
 * | rv unset                                       | etcd (1.31+: cache)    | current           | honoured  |
 * | rv "0" (any match)                             | watch cache            | current           | ignored   |
 * | rv X, NotOlderThan, `limit`                    | etcd (1.31+: cache)    | current, ≥ X      | honoured  |
 * | rv X, no `limit`                               | watch cache            | current, ≥ X      | (none)    |
 *
 * The watch cache ignores `limit` at resourceVersion "0" in every version modelled, 1.36
 * included (`computeListLimit`: "as of today, the limit is ignored for requests that set RV == 0"):
 * the informer's first list, `limit=500&resourceVersion=0`, comes back whole, with no `continue`.
 * The loopback server's cache is always up to date, so serving the current state from it or from
 * etcd differs only in how a resourceVersion the server has not reached is refused.
 */
export type ListPlan =
  /** Continue a paged list at the token's resourceVersion. */
  | { readonly kind: 'continue' }
  /** The state at exactly `rv`, 410 once compacted. */
  | { readonly kind: 'exact'; readonly rv: number }
  /** The current state, at least as new as `minimumRv`, from the watch cache or from etcd. */
  | { readonly kind: 'current'; readonly from: 'cache' | 'etcd'; readonly minimumRv: number | undefined; readonly paged: boolean };

/**
 * Decides how to serve a validated list query.
 * @param parseRv parses a non-zero resourceVersion (throws the API server's 400 when unparsable)
 */
export function planList(query: ListQuery, profile: ServerProfile, parseRv: (text: string) => number): ListPlan {
  const rv = query.resourceVersion;
  const match = query.resourceVersionMatch;
  if (query.continueToken !== undefined) return { kind: 'continue' };
  // Validation has ruled out Exact without a resourceVersion, or at "0".
  if (match === 'Exact' || (match === undefined && query.limit > 0 && rv !== undefined && rv !== '0')) return { kind: 'exact', rv: parseRv(rv!) };
  if (rv === undefined) return { kind: 'current', from: profile.cachePagesLimitedLists ? 'cache' : 'etcd', minimumRv: undefined, paged: true };
  if (rv === '0') return { kind: 'current', from: 'cache', minimumRv: undefined, paged: profile.pagesListsAtResourceVersion0 };
  const minimumRv = parseRv(rv);
  if (query.limit > 0 && !profile.cachePagesLimitedLists) return { kind: 'current', from: 'etcd', minimumRv, paged: true };
  return { kind: 'current', from: 'cache', minimumRv, paged: true };
}
