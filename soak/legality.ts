import type { KubeObject } from '../lib/base/object';

/**
 * The legality checker of the soak: it watches the calls one handler (or the informer's
 * `changes$`) receives and flags every call that no correct informer could make.
 *
 * Rules, per key:
 * - `add` only when the key is absent from what this handler has seen;
 * - `update` only when present, and its old object is the state the handler saw last;
 * - `delete` only when present; nothing after a delete until a new `add`;
 * - `finalStateUnknown` deletes only once the informer has relisted (asked through `relists()`);
 * - no time travel: resourceVersions of one key only grow. (Test tooling may compare them as
 *   numbers because the loopback server's are an integer counter; the library never does.)
 */

/** One call a handler received, in the shape `handle()` and `changes$` share. */
export type ObservedCall<T extends KubeObject = KubeObject> =
  | { readonly type: 'add'; readonly key: string; readonly object: T }
  | { readonly type: 'update'; readonly key: string; readonly oldObject: T; readonly object: T; readonly isResync?: boolean }
  | { readonly type: 'delete'; readonly key: string; readonly object: T; readonly finalStateUnknown: boolean };

/** Which rule a call broke. */
export type LegalityRule =
  | 'add-of-present-key'
  | 'update-of-absent-key'
  | 'update-from-unseen-state'
  | 'delete-of-absent-key'
  | 'final-state-unknown-without-relist'
  | 'time-travel'
  | 'ends-off-server';

/** One broken rule. */
export interface Violation {
  readonly key: string;
  readonly rule: LegalityRule;
  readonly detail: string;
}

/** What one checker has counted. */
export interface LedgerCounts {
  readonly adds: number;
  readonly updates: number;
  readonly resyncs: number;
  readonly deletes: number;
  readonly finalStateUnknownDeletes: number;
}

/** How far a handler's final view is from the server's state. */
export interface ViewDivergence {
  /** On the server, never seen (or seen deleted) by the handler. */
  readonly missing: readonly string[];
  /** Seen by the handler, gone from the server: deletions that never reached it. */
  readonly missedDeletes: readonly string[];
  /** Seen at another resourceVersion than the server's. */
  readonly stale: readonly string[];
}

const MAX_KEPT_VIOLATIONS = 50;

/** The per-key legality checker of one handler. */
export class HandlerLedger {
  /** Key → the resourceVersion the handler saw last ('' when the object had none). */
  private readonly view = new Map<string, string>();
  /** Key → the highest resourceVersion seen for it, deletes included (for time travel). */
  private readonly highest = new Map<string, number>();
  private readonly kept: Violation[] = [];
  private violationCount = 0;
  private illegalCallCount = 0;
  private counts = { adds: 0, updates: 0, resyncs: 0, deletes: 0, finalStateUnknownDeletes: 0 };

  /**
   * @param name names the handler in reports.
   * @param relists how many times the informer has relisted so far (lists after the first).
   */
  constructor(
    readonly name: string,
    private readonly relists: () => number,
  ) {}

  /** Checks and records one call. */
  observe(call: ObservedCall): void {
    const seen = this.view.get(call.key);
    switch (call.type) {
      case 'add':
        this.counts.adds++;
        if (seen !== undefined) this.flag(call.key, 'add-of-present-key', `add at rv ${versionOf(call.object)} while the handler holds rv ${seen}`);
        this.checkForward(call.key, call.object, false);
        this.view.set(call.key, versionOf(call.object));
        return;
      case 'update': {
        // A relist that finds an object unchanged re-delivers it at the same version: a resync.
        const resync = call.isResync === true || versionOf(call.object) === versionOf(call.oldObject);
        if (resync) this.counts.resyncs++;
        else this.counts.updates++;
        if (seen === undefined) {
          this.flag(call.key, 'update-of-absent-key', `update to rv ${versionOf(call.object)} of a key the handler does not hold`);
        } else if (versionOf(call.oldObject) !== seen) {
          this.flag(call.key, 'update-from-unseen-state', `update from rv ${versionOf(call.oldObject)}, but the handler last saw rv ${seen}`);
        }
        this.checkForward(call.key, call.object, resync);
        this.view.set(call.key, versionOf(call.object));
        return;
      }
      case 'delete':
        this.counts.deletes++;
        if (call.finalStateUnknown) {
          this.counts.finalStateUnknownDeletes++;
          if (this.relists() === 0) this.flag(call.key, 'final-state-unknown-without-relist', 'finalStateUnknown delete before any relist');
        }
        if (seen === undefined) this.flag(call.key, 'delete-of-absent-key', 'delete of a key the handler does not hold (or already saw deleted)');
        // A tombstone carries the cached state, which may equal what was seen: only the server's final state must be newer.
        if (!call.finalStateUnknown) this.checkForward(call.key, call.object, true);
        this.view.delete(call.key);
        return;
    }
  }

  /** Compares the handler's view with the server's objects (key → resourceVersion) and flags every difference. */
  settle(server: ReadonlyMap<string, string>): ViewDivergence {
    const divergence = divergenceOf(this.view, server);
    for (const key of divergence.missing) this.flag(key, 'ends-off-server', 'on the server, absent from the handler');
    for (const key of divergence.missedDeletes) this.flag(key, 'ends-off-server', 'deleted on the server, the handler never heard');
    for (const key of divergence.stale) this.flag(key, 'ends-off-server', `handler at rv ${this.view.get(key)}, server at rv ${server.get(key)}`);
    return divergence;
  }

  /** Compares without flagging: for polling until the handler catches up. */
  divergence(server: ReadonlyMap<string, string>): ViewDivergence {
    return divergenceOf(this.view, server);
  }

  get stats(): LedgerCounts {
    return { ...this.counts };
  }

  /** Every violation counted, even those past the first 50 kept. */
  get violationTotal(): number {
    return this.violationCount;
  }

  /** Violations by calls themselves (every rule but `ends-off-server`). */
  get illegalCalls(): number {
    return this.illegalCallCount;
  }

  /** The first 50 violations. */
  get violations(): readonly Violation[] {
    return this.kept;
  }

  /** Keys the handler holds now. */
  get size(): number {
    return this.view.size;
  }

  private checkForward(key: string, object: KubeObject, mayEqual: boolean): void {
    const version = Number(versionOf(object));
    if (!Number.isFinite(version)) return;
    const before = this.highest.get(key);
    if (before !== undefined && (version < before || (!mayEqual && version === before))) {
      this.flag(key, 'time-travel', `rv ${version} after rv ${before}`);
    }
    if (before === undefined || version > before) this.highest.set(key, version);
  }

  private flag(key: string, rule: LegalityRule, detail: string): void {
    this.violationCount++;
    if (rule !== 'ends-off-server') this.illegalCallCount++;
    if (this.kept.length < MAX_KEPT_VIOLATIONS) this.kept.push({ key, rule, detail });
  }
}

/** Missing, extra and stale keys of a view (key → resourceVersion) against the server's. */
export function divergenceOf(view: ReadonlyMap<string, string>, server: ReadonlyMap<string, string>): ViewDivergence {
  const missing: string[] = [];
  const missedDeletes: string[] = [];
  const stale: string[] = [];
  for (const [key, version] of server) {
    const seen = view.get(key);
    if (seen === undefined) missing.push(key);
    else if (seen !== version) stale.push(key);
  }
  for (const key of view.keys()) if (!server.has(key)) missedDeletes.push(key);
  return { missing, missedDeletes, stale };
}

/** True when a view holds exactly the server's objects at the server's versions. */
export function isConverged(divergence: ViewDivergence): boolean {
  return divergence.missing.length === 0 && divergence.missedDeletes.length === 0 && divergence.stale.length === 0;
}

function versionOf(object: KubeObject): string {
  return object.metadata.resourceVersion ?? '';
}
