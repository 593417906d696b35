/**
 * What the demo shows, kept up to date from the informer's changes at O(1) per change: object
 * counts by namespace and phase, the event rate over a sliding window, the last few events.
 * Nothing here reads a clock: every time is passed in, so tests drive it with plain numbers.
 */
import type { Change, KubeObject } from '../lib';

/** The namespace an object is counted under: cluster-scoped objects have none. */
export const CLUSTER_SCOPED = '(cluster)';
/** The phase of an object without `status.phase` (anything but pods and namespaces). */
export const NO_PHASE = '';

/** `status.phase` when the object has one (pods, namespaces, PVCs...), else {@link NO_PHASE}. */
export function phaseOf(object: KubeObject): string {
  const status = (object as { readonly status?: { readonly phase?: unknown } }).status;
  return typeof status?.phase === 'string' && status.phase !== '' ? status.phase : NO_PHASE;
}

/** Objects of one namespace: the total and the split by phase. */
export interface NamespaceCount {
  readonly namespace: string;
  readonly total: number;
  readonly byPhase: ReadonlyMap<string, number>;
}

/** Object counts by namespace and phase, moved by each change instead of recounted. */
export class ObjectCounts {
  private readonly namespaces = new Map<string, { total: number; readonly byPhase: Map<string, number> }>();
  private readonly phases = new Map<string, number>();
  private count = 0;

  /** Objects counted. */
  get total(): number {
    return this.count;
  }

  apply(change: Change): void {
    if (change.type === 'update') {
      // Most updates leave namespace and phase alone: skip the two map round trips.
      if (change.oldObject.metadata.namespace === change.object.metadata.namespace && phaseOf(change.oldObject) === phaseOf(change.object)) return;
      this.move(change.oldObject, -1);
      this.move(change.object, +1);
    } else this.move(change.object, change.type === 'add' ? +1 : -1);
  }

  /** Namespaces holding objects, largest first (ties by name). O(namespaces · log). */
  byNamespace(): NamespaceCount[] {
    const rows: NamespaceCount[] = [];
    for (const [namespace, entry] of this.namespaces) rows.push({ namespace, total: entry.total, byPhase: entry.byPhase });
    return rows.sort((a, b) => b.total - a.total || (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
  }

  /** Objects per phase over all namespaces; phases with no object left are dropped. */
  byPhase(): ReadonlyMap<string, number> {
    return this.phases;
  }

  private move(object: KubeObject, by: 1 | -1): void {
    const namespace = object.metadata.namespace ?? CLUSTER_SCOPED;
    const phase = phaseOf(object);
    let entry = this.namespaces.get(namespace);
    if (entry === undefined) this.namespaces.set(namespace, (entry = { total: 0, byPhase: new Map() }));
    entry.total += by;
    bump(entry.byPhase, phase, by);
    bump(this.phases, phase, by);
    this.count += by;
    if (entry.total <= 0) this.namespaces.delete(namespace);
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

/** Options of {@link EventRate}. */
export interface EventRateOptions {
  /** Length of the sliding window (ms). Default 5000. */
  readonly windowMs?: number;
  /** Width of one bucket (ms): the window slides by this much. Default 250. */
  readonly bucketMs?: number;
}

const MIN_SPAN_MS = 1000;

/**
 * Events per second over a sliding window, kept in a ring of time buckets: recording is O(1), and
 * moving the window costs at most one pass over the ring however long nothing happened.
 */
export class EventRate {
  private readonly bucketMs: number;
  private readonly buckets: Float64Array;
  /** Absolute index (time / bucketMs) of the newest bucket. */
  private newest: number;
  private sum = 0;

  /** @param startedAt when counting began: the rate is not diluted by time before it. */
  constructor(
    private readonly startedAt: number,
    options: EventRateOptions = {},
  ) {
    this.bucketMs = options.bucketMs ?? 250;
    this.buckets = new Float64Array(Math.max(1, Math.ceil((options.windowMs ?? 5000) / this.bucketMs)));
    this.newest = Math.floor(startedAt / this.bucketMs);
  }

  record(now: number, count = 1): void {
    this.slide(now);
    this.buckets[this.newest % this.buckets.length] += count;
    this.sum += count;
  }

  /** Events per second in the window ending at `now`. */
  perSecond(now: number): number {
    this.slide(now);
    const windowStart = (this.newest - this.buckets.length + 1) * this.bucketMs;
    // At least one second: a burst just after the start is not extrapolated to a huge rate.
    const span = Math.max(MIN_SPAN_MS, now - Math.max(this.startedAt, windowStart));
    return (this.sum * 1000) / span;
  }

  private slide(now: number): void {
    const target = Math.floor(now / this.bucketMs);
    if (target <= this.newest) return;
    if (target - this.newest >= this.buckets.length) {
      this.buckets.fill(0);
      this.sum = 0;
    } else {
      for (let index = this.newest + 1; index <= target; index++) {
        const slot = index % this.buckets.length;
        this.sum -= this.buckets[slot] as number;
        this.buckets[slot] = 0;
      }
    }
    this.newest = target;
  }
}

/** One line of the event log. */
export interface RecentEvent {
  readonly at: number;
  readonly type: Change['type'];
  readonly key: string;
  /** What changed, shortly: a phase transition, the new resourceVersion, "final state unknown". */
  readonly detail: string;
}

/** The last `capacity` items, newest first, in a fixed ring. */
export class RecentEvents {
  private readonly ring: (RecentEvent | undefined)[];
  private next = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<RecentEvent | undefined>(Math.max(1, capacity)).fill(undefined);
  }

  push(event: RecentEvent): void {
    this.ring[this.next] = event;
    this.next = (this.next + 1) % this.ring.length;
  }

  /** Newest first. */
  list(): RecentEvent[] {
    const events: RecentEvent[] = [];
    for (let back = 1; back <= this.ring.length; back++) {
      const event = this.ring[(this.next - back + this.ring.length) % this.ring.length];
      if (event === undefined) break;
      events.push(event);
    }
    return events;
  }
}

/** The short description of a change for the event log. */
export function describeChange(change: Change): string {
  switch (change.type) {
    case 'add': {
      const phase = phaseOf(change.object);
      return phase === NO_PHASE ? `rv ${change.object.metadata.resourceVersion ?? '?'}` : phase;
    }
    case 'update': {
      const before = phaseOf(change.oldObject);
      const after = phaseOf(change.object);
      if (before !== after) return `${before || '-'} → ${after || '-'}`;
      return `rv ${change.oldObject.metadata.resourceVersion ?? '?'} → ${change.object.metadata.resourceVersion ?? '?'}`;
    }
    case 'delete':
      return change.finalStateUnknown ? 'final state unknown (missed by the watch)' : `rv ${change.object.metadata.resourceVersion ?? '?'}`;
  }
}

/** Changes seen since the informer synced, by type. */
export interface ChangeTotals {
  readonly add: number;
  readonly update: number;
  readonly delete: number;
}

/**
 * Everything the view shows that is counted from changes. Initial-list adds build the counts but
 * are not events: the rate, the totals and the log start at sync.
 */
export class DemoStats {
  readonly counts = new ObjectCounts();
  readonly recent: RecentEvents;
  private rate: EventRate | undefined;
  private readonly rateOptions: EventRateOptions;
  private readonly totals = { add: 0, update: 0, delete: 0 };
  private syncedAtMs: number | undefined;

  constructor(options: EventRateOptions & { readonly recentEvents?: number } = {}) {
    this.recent = new RecentEvents(options.recentEvents ?? 8);
    this.rateOptions = options;
  }

  /** When the informer synced (the clock passed to {@link markSynced}), or undefined. */
  get syncedAt(): number | undefined {
    return this.syncedAtMs;
  }

  /** The initial list is in: events start counting from `now`. Only the first call counts. */
  markSynced(now: number): void {
    if (this.syncedAtMs !== undefined) return;
    this.syncedAtMs = now;
    this.rate = new EventRate(now, this.rateOptions);
  }

  /** Applies the changes of one snapshot, all stamped `now`. */
  apply(changes: readonly Change[], now: number): void {
    let events = 0;
    for (const change of changes) {
      this.counts.apply(change);
      if (this.rate === undefined) continue;
      // A relist hands back unchanged objects as updates to themselves: no event happened.
      if (change.type === 'update' && change.oldObject === change.object) continue;
      events++;
      this.totals[change.type]++;
      this.recent.push({ at: now, type: change.type, key: change.key, detail: describeChange(change) });
    }
    if (events > 0) this.rate?.record(now, events);
  }

  eventsPerSecond(now: number): number {
    return this.rate?.perSecond(now) ?? 0;
  }

  changeTotals(): ChangeTotals {
    return { ...this.totals };
  }
}
