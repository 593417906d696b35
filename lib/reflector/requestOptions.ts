import type { ListRequest, ReflectorRequest } from './reflectorState';
import type { ListOptions, WatchOptions } from '../sources/listerWatcher';

/**
 * What each of the reflector's requests asks the API server, as pure functions. Which request
 * comes when is `step`'s business (reflectorState.ts); these say how it is put.
 *
 * The rules (client-go's `ListAndWatch`, except where said):
 * 1. A paged list asks for `limit` = `pageSize`, an unpaged one for everything at once (0), at the
 *    request's resourceVersion and match.
 * 2. A watch asks for bookmarks, and for a `timeoutSeconds` drawn per watch from [min, max), so
 *    that informers started together do not reconnect together.
 * 3. A watch that delivers nothing for `timeoutSeconds` + 5 s is dead (kube-rs's grace): the server
 *    would have closed it by then.
 * 4. A streaming list is a watch with `sendInitialEvents` and `resourceVersionMatch=NotOlderThan`,
 *    which the API requires with initial events.
 */

/** Rule 3: seconds the client waits beyond the server's `timeoutSeconds` before calling a watch dead. */
export const IDLE_GRACE_SECONDS = 5;

/** Rule 1: the options of a list request. */
export function listOptions(request: ListRequest, pageSize: number): ListOptions {
  const limit = request.paged ? pageSize : 0;
  if (request.resourceVersionMatch === undefined) return { resourceVersion: request.resourceVersion, limit };
  return { resourceVersion: request.resourceVersion, limit, resourceVersionMatch: request.resourceVersionMatch };
}

/** Rules 2 and 4: the options of a watch or streaming list. */
export function watchOptions(request: ReflectorRequest & { readonly kind: 'watch' | 'streamingList' }, timeoutSeconds: number): WatchOptions {
  const { resourceVersion } = request;
  if (request.kind === 'watch') return { resourceVersion, allowWatchBookmarks: true, timeoutSeconds };
  return { resourceVersion, resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds };
}

/** Rule 2: a whole number of seconds in [min, max) (exactly min when min === max). */
export function drawTimeoutSeconds(range: { readonly min: number; readonly max: number }, random: () => number): number {
  if (range.max <= range.min) return range.min;
  return Math.min(range.max - 1, range.min + Math.floor(random() * (range.max - range.min)));
}

/** Rule 3: how long (ms) a watch asked for `timeoutSeconds` may stay silent. */
export function watchIdleMs(timeoutSeconds: number): number {
  return (timeoutSeconds + IDLE_GRACE_SECONDS) * 1000;
}
