import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import { compareResourceVersions } from './resourceVersions';

/**
 * The bookkeeping of reads after writes: which writes of each primary key's reconciles the
 * caches have not shown yet, updated from every snapshot of the informer that should show them.
 *
 * A write is seen by a snapshot of its informer when
 * 1. it deleted the object: the snapshot holds no object of its uid under the key;
 * 2. otherwise: the snapshot holds the object at exactly the written resourceVersion, or the
 *    snapshot itself is at it (an event or bookmark carrying it was the last applied), or a
 *    delete of that very object (its uid) came after it;
 * 3. and, from a server that orders resourceVersions (1.35+, KEP-5504), when both are
 *    well-formed: the snapshot is complete at the written version or later, or holds the object
 *    at it or later.
 *
 * Without order, a write whose version the cache never holds (another write to the object came
 * in the same batch, or a relist skipped it) is never seen: the reconcile that waits for it goes
 * ahead at its bound. A newer write to an object by the same key replaces the older one: seeing
 * the newer implies the older, and the older may never show on its own.
 *
 * Costs: O(1) to record; per snapshot of an informer with writes pending, O(its changes) plus
 * O(writes pending on it), which are the few objects written in the last moments, never the cache.
 */

/** A write not yet seen. */
export interface PendingWrite {
  /** The primary key whose reconcile wrote it. */
  readonly primaryKey: string;
  /** The informer (its index in the world) that should show it. */
  readonly informer: number;
  /** The written object's key. */
  readonly key: string;
  readonly uid: string | undefined;
  /** The version the server answered with ('' when it answered none). */
  readonly resourceVersion: string;
  /** True when the write deleted the object. */
  readonly deleted: boolean;
  /** When the answer arrived (the scheduler's ms). */
  readonly at: number;
}

export class WriteExpectations {
  private readonly byPrimary = new Map<string, Set<PendingWrite>>();
  /** Per informer: pending writes by object key. */
  private readonly byObject: Map<string, Set<PendingWrite>>[];
  private readonly pendingOn: number[];

  constructor(
    informers: number,
    /** Whether the server orders resourceVersions; asked at each check (it is learnt at run time). */
    private readonly ordered: () => boolean,
    /** Told when the last pending write of a primary key has been seen. */
    private readonly met: (primaryKey: string) => void,
  ) {
    this.byObject = Array.from({ length: informers }, () => new Map());
    this.pendingOn = Array.from({ length: informers }, () => 0);
  }

  /** Records a write, unless `snapshot` (its informer's latest) shows it already. */
  record(write: PendingWrite, snapshot: Snapshot<KubeObject>): void {
    const objects = this.byObject[write.informer]!;
    for (const older of objects.get(write.key) ?? []) if (older.primaryKey === write.primaryKey) this.remove(older, false);
    if (this.seen(write, snapshot, false)) return;
    let forKey = objects.get(write.key);
    if (forKey === undefined) objects.set(write.key, (forKey = new Set()));
    forKey.add(write);
    let forPrimary = this.byPrimary.get(write.primaryKey);
    if (forPrimary === undefined) this.byPrimary.set(write.primaryKey, (forPrimary = new Set()));
    forPrimary.add(write);
    this.pendingOn[write.informer]! += 1;
  }

  /** A new snapshot of one informer: marks the writes it shows as seen. */
  observe(informer: number, snapshot: Snapshot<KubeObject>): void {
    if (this.pendingOn[informer] === 0) return;
    const objects = this.byObject[informer]!;
    // Deletes of written objects in this batch, by key: the uids that went.
    let deletedUids: Map<string, Set<string>> | undefined;
    for (const change of snapshot.changes) {
      if (change.type !== 'delete' || !objects.has(change.key)) continue;
      const uid = change.object.metadata.uid;
      if (uid === undefined) continue;
      deletedUids ??= new Map();
      let uids = deletedUids.get(change.key);
      if (uids === undefined) deletedUids.set(change.key, (uids = new Set()));
      uids.add(uid);
    }
    for (const [key, writes] of [...objects]) {
      const deleted = deletedUids?.get(key);
      for (const write of [...writes]) {
        const deletedSince = write.uid !== undefined && deleted?.has(write.uid) === true;
        if (this.seen(write, snapshot, deletedSince)) this.remove(write, true);
      }
    }
  }

  /** The writes of a primary key the caches have not shown. */
  unseen(primaryKey: string): readonly PendingWrite[] {
    const writes = this.byPrimary.get(primaryKey);
    return writes === undefined ? [] : [...writes];
  }

  /** Drops a primary key's pending writes (its reconcile stopped waiting for them). */
  forget(primaryKey: string): void {
    for (const write of this.unseen(primaryKey)) this.remove(write, false);
  }

  /** Drops the writes answered before `before` (ms) that no reconcile waited for. */
  expire(before: number): void {
    for (const writes of [...this.byPrimary.values()]) for (const write of [...writes]) if (write.at < before) this.remove(write, false);
  }

  private seen(write: PendingWrite, snapshot: Snapshot<KubeObject>, deletedSince: boolean): boolean {
    const cached = snapshot.get(write.key);
    if (write.deleted) return cached === undefined || (write.uid !== undefined && cached.metadata.uid !== write.uid);
    if (deletedSince && cached?.metadata.uid !== write.uid) return true;
    const version = write.resourceVersion;
    if (version === '') return cached !== undefined;
    if (cached?.metadata.resourceVersion === version || snapshot.resourceVersion === version) return true;
    if (!this.ordered()) return false;
    // A cache complete at the written version or later holds the write (or what came after it).
    return atOrAfter(snapshot.resourceVersion, version) || (cached?.metadata.resourceVersion !== undefined && atOrAfter(cached.metadata.resourceVersion, version));
  }

  private remove(write: PendingWrite, seen: boolean): void {
    const objects = this.byObject[write.informer]!;
    const forKey = objects.get(write.key);
    if (forKey?.delete(write) !== true) return;
    if (forKey.size === 0) objects.delete(write.key);
    this.pendingOn[write.informer]! -= 1;
    const forPrimary = this.byPrimary.get(write.primaryKey)!;
    forPrimary.delete(write);
    if (forPrimary.size > 0) return;
    this.byPrimary.delete(write.primaryKey);
    if (seen) this.met(write.primaryKey);
  }
}

function atOrAfter(version: string, written: string): boolean {
  const order = compareResourceVersions(version, written);
  return order !== undefined && order >= 0;
}
