import type { Delta } from './delta';
import type { Health } from './health';
import type { RequestEvent } from './requestEvent';
import type { KubeObject } from '../base/object';

/**
 * What `reflectorEvents` emits: the delta stream, with the reflector's reports among the deltas as
 * plain data. Deltas travel as they are, without a wrapper, so that a watch event costs nothing
 * beyond its delta; reports are a few objects per request. A consumer tells them apart by `type`.
 */

/** A health report: on every phase change, on each list page but the last, and when a failing watch recovers. */
export interface HealthReport {
  readonly type: 'health';
  readonly health: Health;
}

/** A report of the reflector: its health, or a request that opened or ended. */
export type ReflectorReport = HealthReport | RequestEvent;

/** One event of the reflector's stream: a delta or a report. */
export type ReflectorEvent<T extends KubeObject = KubeObject> = Delta<T> | ReflectorReport;

/** True for a delta, false for a report. */
export function isDelta<T extends KubeObject>(event: ReflectorEvent<T>): event is Delta<T> {
  return event.type !== 'health' && event.type !== 'opened' && event.type !== 'ended';
}
