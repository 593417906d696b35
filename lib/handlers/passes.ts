import type { KubeObject } from '../base/object';
import type { Snapshot } from '../store/snapshot';
import type { AddChange, Change } from '../store/change';
import type { UpdateNotification } from './notifications';

/**
 * The initial pass of a handler: every object of the first snapshot it receives, as an add with
 * `isInInitialList` (a handler that starts late sees the current cache, not the changes that built
 * it). It walks the immutable snapshot lazily and holds nothing else. When that snapshot's own
 * changes built it from an empty cache (one add per object, as a first list makes), those adds are
 * the pass, in their order and with their marks: a sharded informer's first list is a handover,
 * and its handlers see each add marked with its bucket's acquisition, as `changes$` does. It reads
 * one add ahead, so that `done` turns true as soon as the last add is taken: the handler counts as
 * synced once that one returns, not one turn later.
 */
export class InitialPass<T extends KubeObject> {
  private readonly keys: Iterator<string>;
  /** The snapshot's adds when they are the whole snapshot; else undefined, and the keys are walked. */
  private readonly adds: readonly Change<T>[] | undefined;
  private nextAdd = 0;
  private ahead: AddChange<T> | undefined;

  constructor(private readonly snapshot: Snapshot<T>) {
    const { changes } = snapshot;
    this.adds = changes.length === snapshot.size && changes.every((change) => change.type === 'add') ? changes : undefined;
    this.keys = snapshot.keys();
    this.ahead = this.read();
  }

  /** True when every add has been taken. */
  get done(): boolean {
    return this.ahead === undefined;
  }

  next(): AddChange<T> | undefined {
    const notification = this.ahead;
    if (notification !== undefined) this.ahead = this.read();
    return notification;
  }

  private read(): AddChange<T> | undefined {
    if (this.adds !== undefined) {
      // Read from the snapshot as the walk does: the object delivered is the cache's.
      for (let change = this.adds[this.nextAdd++]; change !== undefined; change = this.adds[this.nextAdd++]) {
        const object = this.snapshot.get(change.key);
        if (object !== undefined && change.type === 'add') return { ...change, object, isInInitialList: true };
      }
      return undefined;
    }
    for (let step = this.keys.next(); step.done !== true; step = this.keys.next()) {
      const object = this.snapshot.get(step.value);
      if (object !== undefined) return { type: 'add', key: step.value, object, isInInitialList: true };
    }
    return undefined;
  }
}

/**
 * A resync pass: every key of the snapshot the resync timer named, re-delivered as an update with
 * `isResync` and the same old and new object. The owner advances it only while nothing else is
 * pending, so the handler has seen the latest state of every key: each object is read from the
 * latest snapshot as it is delivered, never an older state than one the handler saw, nor an
 * object deleted since the pass began.
 */
export class ResyncPass<T extends KubeObject> {
  private readonly keys: Iterator<string>;

  /**
   * @param snapshot the snapshot whose keys are walked.
   * @param latest the latest snapshot, read at each step.
   */
  constructor(
    snapshot: Snapshot<T>,
    private readonly latest: () => Snapshot<T>,
  ) {
    this.keys = snapshot.keys();
  }

  next(): UpdateNotification<T> | undefined {
    for (let step = this.keys.next(); step.done !== true; step = this.keys.next()) {
      const object = this.latest().get(step.value);
      if (object !== undefined) return { type: 'update', key: step.value, oldObject: object, object, isResync: true };
    }
    return undefined;
  }
}
