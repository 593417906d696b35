import type { KubeObject } from 'rx-informer';
import type { Resource } from 'rx-informer';
import { namespaces as namespaceResource, pods as podResource, type Namespace } from 'rx-informer';
import { APPS, NAME_ALPHABET, evolvePod, replicaSetOf, timestamp, makePod } from './pods';
import { pick, randomString, seededRandom, type Random } from './random';

export { seededRandom } from './random';
export type { Random } from './random';
export { makePod } from './pods';
export type { MakePodOptions } from './pods';

/**
 * The part of the loopback server's `ClusterStore` the churn generator uses. Any store with these
 * methods will do, so the generator can also drive a fake in unit tests.
 */
export interface ChurnStore {
  /** Creates an object; the store sets uid, resourceVersion and creationTimestamp. */
  create<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** Replaces an object. */
  update<T extends KubeObject>(resource: Resource<T>, object: T): T;
  /** Deletes an object and returns its last state. */
  delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T;
  /** The object under namespace/name, if any. */
  get<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T | undefined;
  /** The objects of a resource, in one namespace or all. */
  list<T extends KubeObject>(resource: Resource<T>, namespace?: string): T[];
}

/** How much and what kind of churn to generate. Every default is documented on its field. */
export interface ChurnOptions {
  /** Seed of the random generator; the same seed replays the same mutations. Default 1. */
  readonly seed?: number;
  /** Namespaces `ns-0` ... `ns-(n-1)`. Default 10. */
  readonly namespaces?: number;
  /** Pods created by `populate()`, spread over the namespaces. Default 100. */
  readonly pods?: number;
  /** Mutation rates for `start()`, per second. Each defaults to 0. They also weight `step()`. */
  readonly createsPerSecond?: number;
  readonly updatesPerSecond?: number;
  readonly deletesPerSecond?: number;
  /** Give pods `metadata.managedFields`, most of a pod's JSON (see `makePod`). Default true. */
  readonly managedFields?: boolean;
  /**
   * The clock stamped into condition transition times on updates. Default `Date.now`; pass a fixed
   * clock to make the pod contents, not only the mutation sequence, repeatable.
   */
  readonly now?: () => number;
  /** Called when a timed mutation fails for a reason other than a vanished or taken pod; the churn has stopped. Default: a process warning. */
  readonly onError?: (error: unknown) => void;
}

/** What each kind of mutation has done so far. */
export interface ChurnStats {
  readonly creates: number;
  readonly updates: number;
  readonly deletes: number;
}

/** A running (or runnable) churn: seed the store, then mutate it step by step or on timers. */
export interface Churn {
  /** Creates the namespaces and the initial pods. Calling it again does nothing. */
  populate(): void;
  /** One create, update or delete, chosen by the seeded generator in proportion to the rates. */
  step(): void;
  /** Mutates at the configured rates on an unref'd timer (it never keeps the process alive). */
  start(): void;
  /** Clears the timer. `start()` may be called again. */
  stop(): void;
  readonly stats: ChurnStats;
}


/** The HTTP code a store error carries (`ApiStatusError.status.code`), read structurally. */
function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  const status: unknown = error.status;
  if (typeof status !== 'object' || status === null || !('code' in status)) return undefined;
  return typeof status.code === 'number' ? status.code : undefined;
}

interface LivePod {
  readonly namespace: string;
  readonly name: string;
}

type Mutation = 'create' | 'update' | 'delete';

/** When every rate is 0, `step()` still mixes like `--churn`: 1 create : 8 updates : 1 delete. */
const DEFAULT_MIX = { create: 1, update: 8, delete: 1 } as const;
const COUNTERS = { create: 'creates', update: 'updates', delete: 'deletes' } as const;
/** A mutation may meet a pod someone else deleted or a name someone else took: try a few others. */
const MAX_ATTEMPTS = 8;
/** After an event-loop stall, catch up at most one second of backlog instead of bursting. */
const MAX_BACKLOG_SECONDS = 1;

class ChurnGenerator implements Churn {
  private readonly random: Random;
  private readonly namespaceNames: readonly string[];
  private readonly weights: Readonly<Record<Mutation, number>>;
  private readonly totalRate: number;
  private readonly now: () => number;
  private readonly managedFields: boolean;
  /** Live pods in an array (O(1) random pick) plus their positions (O(1) swap-remove). */
  private readonly live: LivePod[] = [];
  private readonly positions = new Map<string, number>();
  private populated = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private counts = { creates: 0, updates: 0, deletes: 0 };

  constructor(
    private readonly store: ChurnStore,
    private readonly options: ChurnOptions,
  ) {
    this.random = seededRandom(options.seed ?? 1);
    this.namespaceNames = Array.from({ length: Math.max(1, options.namespaces ?? 10) }, (_, i) => `ns-${i}`);
    const rates = { create: options.createsPerSecond ?? 0, update: options.updatesPerSecond ?? 0, delete: options.deletesPerSecond ?? 0 };
    this.totalRate = rates.create + rates.update + rates.delete;
    this.weights = this.totalRate > 0 ? rates : DEFAULT_MIX;
    this.now = options.now ?? Date.now;
    this.managedFields = options.managedFields ?? true;
  }

  get stats(): ChurnStats {
    return { ...this.counts };
  }

  populate(): void {
    if (this.populated) return;
    this.populated = true;
    for (const name of this.namespaceNames) {
      if (this.store.get(namespaceResource, undefined, name) === undefined) {
        const namespace: Namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'kubernetes.io/metadata.name': name } }, status: { phase: 'Active' } };
        this.store.create(namespaceResource, namespace);
      }
      // Pods already there (another churn, a test) join the pool, so updates and deletes reach them.
      for (const pod of this.store.list(podResource, name)) this.remember({ namespace: name, name: pod.metadata.name });
    }
    const count = this.options.pods ?? 100;
    for (let i = 0; i < count; i++) {
      const namespace = this.namespaceNames[i % this.namespaceNames.length] as string;
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !this.create(namespace, undefined); attempt++);
    }
  }

  step(): void {
    const mutation = this.choose();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const performed: Mutation = this.live.length === 0 ? 'create' : mutation;
      const done = performed === 'create' ? this.create(pick(this.random, this.namespaceNames), this.now()) : performed === 'update' ? this.update() : this.delete();
      if (done) {
        this.counts[COUNTERS[performed]]++;
        return;
      }
    }
  }

  start(): void {
    if (this.timer !== undefined || this.totalRate <= 0) return;
    this.populate();
    const startedAt = performance.now();
    let performed = 0;
    // One timer for all kinds: at high rates each tick performs the mutations that fell due.
    const periodMs = Math.min(100, Math.max(10, 1000 / this.totalRate));
    this.timer = setInterval(() => {
      const due = Math.floor(((performance.now() - startedAt) * this.totalRate) / 1000);
      const backlogLimit = Math.ceil(this.totalRate * MAX_BACKLOG_SECONDS);
      if (due - performed > backlogLimit) performed = due - backlogLimit;
      try {
        for (; performed < due; performed++) this.step();
      } catch (error) {
        this.stop();
        (this.options.onError ?? reportChurnError)(error);
      }
    }, periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private choose(): Mutation {
    const { create, update } = this.weights;
    const draw = this.random() * (create + update + this.weights.delete);
    return draw < create ? 'create' : draw < create + update ? 'update' : 'delete';
  }

  /** Creates one pod; false when the drawn name was taken (by us or by someone else). */
  private create(namespace: string, startedAt: number | undefined): boolean {
    const profile = pick(this.random, APPS);
    const shape = replicaSetOf(namespace, profile);
    const name = `${profile.app}-${shape.hash}-${randomString(this.random, NAME_ALPHABET, 5)}`;
    const pod = makePod(this.random, namespace, name, {
      app: profile.app,
      managedFields: this.managedFields,
      ...(startedAt === undefined ? {} : { startedAt }),
    });
    if (this.positions.has(`${namespace}/${name}`)) return false;
    try {
      this.store.create(podResource, pod);
    } catch (error) {
      if (statusCodeOf(error) === 409) return false;
      throw error;
    }
    this.remember({ namespace, name });
    return true;
  }

  /** Changes a pod's status (phase, readiness, restarts) and sometimes its labels. */
  private update(): boolean {
    const target = pick(this.random, this.live);
    const current = this.store.get(podResource, target.namespace, target.name);
    if (current === undefined) {
      this.forget(target);
      return false;
    }
    try {
      this.store.update(podResource, evolvePod(current, this.random, timestamp(this.now())));
    } catch (error) {
      if (statusCodeOf(error) !== 404) throw error;
      this.forget(target);
      return false;
    }
    return true;
  }

  private delete(): boolean {
    const target = pick(this.random, this.live);
    this.forget(target);
    try {
      this.store.delete(podResource, target.namespace, target.name);
    } catch (error) {
      if (statusCodeOf(error) === 404) return false;
      throw error;
    }
    return true;
  }

  private remember(pod: LivePod): void {
    const key = `${pod.namespace}/${pod.name}`;
    if (this.positions.has(key)) return;
    this.positions.set(key, this.live.length);
    this.live.push(pod);
  }

  private forget(pod: LivePod): void {
    const key = `${pod.namespace}/${pod.name}`;
    const index = this.positions.get(key);
    if (index === undefined) return;
    const last = this.live.pop() as LivePod;
    this.positions.delete(key);
    if (index < this.live.length) {
      this.live[index] = last;
      this.positions.set(`${last.namespace}/${last.name}`, index);
    }
  }
}

function reportChurnError(error: unknown): void {
  process.emitWarning(`churn stopped: ${error instanceof Error ? error.message : String(error)}`, 'ChurnWarning');
}


/**
 * A seeded churn generator over a cluster store: namespaces `ns-0`..., realistic pods, then a
 * stream of creates, updates and deletes. Every choice (which mutation, which namespace and pod,
 * names, phases, labels) comes from `seededRandom(seed)`, so the same seed and the same starting
 * store replay the same sequence of mutations; only the timing of `start()` depends on the clock.
 *
 * `populate()` mutations are not counted in `stats`; `step()` mutations are. When all rates are 0,
 * `step()` mixes 1 create : 8 updates : 1 delete.
 *
 * ## Example
 * ```ts
 * import { createChurn, startApiServer } from 'rx-informer-apiserver';
 *
 * const server = await startApiServer();
 * const churn = createChurn(server.store, { pods: 1000, updatesPerSecond: 200 });
 * churn.populate();
 * churn.start();
 * // ... later
 * churn.stop();
 * await server.close();
 * ```
 */
export function createChurn(store: ChurnStore, options: ChurnOptions = {}): Churn {
  return new ChurnGenerator(store, options);
}
