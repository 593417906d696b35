import { defer, Observable, of, VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { StatusError } from '../../lib/base/errors';
import type { KubeObject } from '../../lib/base/object';
import type { InformerFactory, InformerForOptions } from '../../lib/factory/factory';
import { informerFrom, type Informer } from '../../lib/informer/informer';
import type { Resource } from '../../lib/resources/resource';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import { NAMESPACE_INDEX, namespaceIndex, type IndexFunc } from '../../lib/store/indexers';
import type { ObjectClient, ObjectPatch, ObjectRef } from '../../lib/controller/objectClient';
import { builtinResources, createClusterStore, storeListerWatcher, type ClusterStore, type ServedResource } from '../../apiserver/src';
import { servedResourceOf } from '../../apiserver/src/builtinResources';
import { ClusterStoreImpl } from '../../apiserver/src/clusterStore';
import { createObject } from '../../apiserver/src/objectHandlers';
import { patchObject } from '../../apiserver/src/patchHandler';
import { ApiStatusError } from '../../apiserver/src/status';

/**
 * A cluster in virtual time for controller specs: a loopback store, informers over it through a
 * stand-in factory (`storeListerWatcher`, watch events `watchLatency` ms late), and an
 * `ObjectClient` over the same store whose writes are applied `writeLatency / 2` ms after they
 * are sent and answered `writeLatency` ms after. Reconcilers may be async: {@link Cluster.runTo}
 * lets the Promises of each instant settle before the clock moves on.
 */
export class Cluster {
  readonly time = new VirtualTimeScheduler(VirtualAction, Infinity);
  readonly store: ClusterStore = createClusterStore();
  /** ms between a change in the store and its watch event reaching an informer. */
  watchLatency = 0;
  /** ms of a write's round trip. */
  writeLatency = 0;
  /** Breaks open watches (before each event) and fails new list and watch requests while set. */
  watchFault: 'unreachable' | undefined;
  /** The minor version `client.version()` answers; 36 orders resourceVersions (KEP-5504). */
  serverMinor = '36';
  /** Runs right after each write is applied, in the same instant (someone else's write landing with ours). */
  afterWrite: (() => void) | undefined;
  /** Each informer the stand-in factory made: `plural@namespace?labelSelector`. */
  readonly informersMade: string[] = [];
  /** Each list and watch request: `list configmaps`, `watch widgets`. */
  readonly requests: string[] = [];
  /** Each write sent: `patch widgets ns/w`. */
  readonly writes: string[] = [];

  private readonly informers = new Map<string, Informer<KubeObject>>();

  /** Stand-in for `informerFactory`: one informer per resource and scope, over the store. */
  readonly factory: Pick<InformerFactory, 'informerFor'> = {
    informerFor: ((resource: Resource<KubeObject>, options: InformerForOptions = {}) => {
      const key = `${resource.plural}@${options.namespace ?? ''}?${options.labelSelector ?? ''}`;
      let made = this.informers.get(key);
      if (made === undefined) {
        this.informersMade.push(key);
        const listerWatcher = this.counted(resource, storeListerWatcher(this.store, resource, { scheduler: this.time, namespace: options.namespace, labelSelector: options.labelSelector, latency: () => ({ there: 0, back: this.watchLatency }), fault: () => this.watchFault }));
        const indexers: Record<string, IndexFunc<KubeObject>> = { [NAMESPACE_INDEX]: namespaceIndex, ...(options.indexers as Record<string, IndexFunc<KubeObject>> | undefined) };
        made = informerFrom(listerWatcher, { scheduler: this.time, logger: silentLogger, name: key, indexers, streamingList: false });
        this.informers.set(key, made);
      }
      return made;
    }) as InformerFactory['informerFor'],
  };

  /** An `ObjectClient` over the store, with `writeLatency`. */
  readonly client: ObjectClient = {
    create: (resource, object) => this.write(`create ${resource.plural} ${refOf(resource, object.metadata)}`, () => createObject(this.impl, servedOf(resource), object.metadata.namespace, object, HARNESS_MANAGER).object) as never,
    patch: (resource, target, patch) =>
      this.write(`patch ${resource.plural} ${refOf(resource, target)}`, () => {
        const [type, body] = patchBody(patch);
        return patchObject(this.impl, servedOf(resource), target.namespace, target.name, Buffer.from(JSON.stringify(body)), undefined, { contentType: type, query: {}, manager: HARNESS_MANAGER }).entry.object;
      }) as never,
    delete: (resource, target) => this.write(`delete ${resource.plural} ${refOf(resource, target)}`, () => this.store.delete(resource as Resource<KubeObject>, target.namespace, target.name)) as never,
    version: () => defer(() => of({ major: '1', minor: this.serverMinor })),
  };

  private get impl(): ClusterStoreImpl {
    return this.store as ClusterStoreImpl;
  }

  /** Runs every action due up to `t` (virtual ms), letting Promises settle after each instant. */
  async runTo(t: number): Promise<void> {
    for (;;) {
      await settlePromises();
      const next = this.time.actions[0];
      if (next === undefined || next.delay > t) break;
      this.time.maxFrames = next.delay;
      this.time.flush();
    }
    this.time.frame = Math.max(this.time.frame, t);
  }

  /** Runs `ms` more. */
  advance(ms: number): Promise<void> {
    return this.runTo(this.time.now() + ms);
  }

  /** Schedules `action` at `t`. */
  at(t: number, action: () => void): Subscription {
    return this.time.schedule(action, t - this.time.now());
  }

  private write<T>(line: string, apply: () => T): Observable<T> {
    return new Observable<T>((subscriber) => {
      this.writes.push(line);
      let answer: Subscription | undefined;
      const arrive = this.time.schedule(() => {
        let outcome: { readonly value: T } | { readonly error: unknown };
        try {
          outcome = { value: JSON.parse(JSON.stringify(apply())) as T };
          this.afterWrite?.();
        } catch (error) {
          outcome = { error: error instanceof ApiStatusError ? new StatusError(error.status) : error };
        }
        answer = this.time.schedule(() => {
          if ('error' in outcome) return subscriber.error(outcome.error);
          subscriber.next(outcome.value);
          subscriber.complete();
        }, this.writeLatency / 2);
      }, this.writeLatency / 2);
      return () => {
        arrive.unsubscribe();
        answer?.unsubscribe();
      };
    });
  }

  private counted<T extends KubeObject>(resource: Resource<T>, inner: ListerWatcher<T>): ListerWatcher<T> {
    return {
      list: (options) => defer(() => {
        this.requests.push(`list ${resource.plural}`);
        return inner.list(options);
      }),
      watch: (options) => defer(() => {
        this.requests.push(`watch ${resource.plural}`);
        return inner.watch(options);
      }),
    };
  }
}

function refOf(resource: Resource<KubeObject>, target: ObjectRef): string {
  return resource.namespaced ? `${target.namespace ?? ''}/${target.name}` : target.name;
}

/** The field manager the harness's writes record. */
const HARNESS_MANAGER = 'controller-spec';

/** How the loopback server serves a resource: its built-in entry (its registry strategy), else as a custom resource. */
function servedOf(resource: Resource<KubeObject>): ServedResource {
  return builtinResources.find((entry) => entry.resource.group === resource.group && entry.resource.plural === resource.plural) ?? servedResourceOf(resource);
}

function patchBody(patch: ObjectPatch): [string, unknown] {
  return patch.type === 'merge' ? ['application/merge-patch+json', patch.patch] : ['application/json-patch+json', patch.operations];
}

/** Lets every Promise callback queued so far run (and those they queue), before virtual time moves. */
export async function settlePromises(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
