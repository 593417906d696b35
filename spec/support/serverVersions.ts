import { NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION, type RequestRecord, type ServerVersion } from '../../apiserver/src';

/**
 * The API server versions every end-to-end suite that lists runs against: the oldest modelled
 * (1.26: a streaming list is refused with 422, so the informer lists instead) and the newest
 * (streaming lists served). Both answer a list at resourceVersion "0" whole, ignoring `limit`, as
 * every real API server does; `startApiServer()` without a `serverVersion` pages it, which none
 * does, so a suite keeps that idealised server only where it is what the suite is about.
 */
export const BOUNDARY_SERVER_VERSIONS: readonly ServerVersion[] = [OLDEST_SERVER_VERSION, NEWEST_SERVER_VERSION];

/**
 * `describe` once per boundary version, the version handed to `body` for `startApiServer({ serverVersion })`.
 * The suite's name gains ": Kubernetes 1.26" and so on.
 */
export function describeEachServerVersion(name: string, body: (serverVersion: ServerVersion) => void): void {
  describe.each(BOUNDARY_SERVER_VERSIONS)(`${name}: Kubernetes %s`, body);
}

/**
 * Whether a logged request filled a cache: a list, or a streaming list (a watch with
 * `sendInitialEvents`) that the server served. A server without streaming lists refuses one with
 * 422 and the informer lists instead: the refused request filled nothing.
 */
export function isServedList(record: Pick<RequestRecord, 'verb' | 'status' | 'query'>): boolean {
  return record.status === 200 && (record.verb === 'list' || record.query['sendInitialEvents'] === 'true');
}
