import { Subscription, type SchedulerLike } from 'rxjs';
import { customResourceDefinitions, type CustomResourceDefinition, type KubeObject, type Resource } from 'rx-informer';
import type { ClusterStoreImpl } from './clusterStore';
import { CRD_CLEANUP_FINALIZER, established, isConditionTrue, namesAccepted, servedByCrd, storageResourceOf, withCondition } from './crdServing';
import type { StoreEvent } from './history';
import type { ServedResources } from './servedResources';
import { ApiStatusError } from './status';

/**
 * The controllers of apiextensions-apiserver that give a CustomResourceDefinition its life, played
 * on the loopback server's store. Each reacts to the CRD's watch events and writes, as the real
 * ones do, in a later task (never inside the store's own notification):
 *
 * 1. **Naming** (`controller/status/naming_controller.go`): a new CRD gets its accepted names,
 *    `NamesAccepted` true and `Established` false "Installing"; a CRD whose spec names change gets
 *    them accepted again.
 * 2. **Establishing** (`controller/establish/establishing_controller.go`): then `Established` true
 *    "InitialNamesAccepted". From that write on, the CRD's served versions are served: routed,
 *    and listed by discovery (`customresource_discovery_controller.go` lists established CRDs
 *    only). The resource's watch cache starts empty then, as a new storage's cacher does. (The API
 *    server already answers requests once `NamesAccepted` is true, `customresource_handler.go`;
 *    here routing waits for `Established` too, one scheduler task later: nothing relies on that
 *    window, and one list of what is served keeps routing and discovery in step.)
 * 3. **Finalizer** (`controller/finalizer/crd_finalizer.go`): a CRD marked deleted with the cleanup
 *    finalizer gets `Terminating` "InstanceDeletionInProgress" (discovery then lists only the verbs
 *    that read or delete), then every object of its resource is deleted (their DELETED events go to
 *    their watches), and once none is left (objects held by finalizers of their own are waited for)
 *    the finalizer is removed with `Terminating` false "InstanceDeletionCompleted", which deletes
 *    the CRD. A CRD never established loses its finalizer at once ("NeverEstablished").
 * 4. **Teardown** (`customresource_handler.go`, `removeDeadStorage`): once the CRD is deleted its
 *    resources are served no more (their URLs answer the NotFound handler's 404) and their open
 *    watches end, as the destroyed storage ends them.
 */
export class CrdControllers {
  private readonly subscription = new Subscription();
  /** CRDs with a write scheduled, by name: one at a time each. */
  private readonly scheduled = new Set<string>();
  /** CRDs whose cleanup waits for objects held by finalizers, by name: the removal of their listener. */
  private readonly waiting = new Map<string, () => void>();
  /** The uid each CRD is served under: a CRD created again starts a new watch cache. */
  private readonly servedUids = new Map<string, string>();

  constructor(
    private readonly store: ClusterStoreImpl,
    private readonly served: ServedResources,
    private readonly scheduler: SchedulerLike,
    /** Ends the open watches of a resource (any version of its group and plural). */
    private readonly endWatches: (resource: Resource<KubeObject>) => void,
  ) {
    this.subscription.add(store.subscribe(customResourceDefinitions, (event) => this.changed(event)));
  }

  /** Stops reacting; writes already scheduled are dropped. */
  close(): void {
    this.subscription.unsubscribe();
    for (const stop of this.waiting.values()) stop();
    this.waiting.clear();
  }

  private changed(event: StoreEvent): void {
    const crd = event.object.object as CustomResourceDefinition;
    const name = crd.metadata.name;
    if (event.type === 'DELETED') return this.tearDown(crd);
    if (isConditionTrue(crd, 'Established')) this.serve(crd);
    this.schedule(name);
  }

  /** Rule 2: serves an established CRD's versions (again, after any change of the CRD). */
  private serve(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name;
    const uid = crd.metadata.uid ?? '';
    if (this.servedUids.get(name) !== uid) {
      this.servedUids.set(name, uid);
      this.store.bucket(storageResourceOf(crd)).history.resetWatchCache(this.store.currentRv);
    }
    this.served.setCustom(name, servedByCrd(crd));
  }

  /** Rule 4. */
  private tearDown(crd: CustomResourceDefinition): void {
    const name = crd.metadata.name;
    this.waiting.get(name)?.();
    this.waiting.delete(name);
    this.servedUids.delete(name);
    this.served.removeCustom(name);
    this.endWatches(storageResourceOf(crd));
  }

  /** The next write the CRD needs, in a later task, if it needs one. */
  private schedule(name: string): void {
    if (this.scheduled.has(name)) return;
    this.scheduled.add(name);
    this.subscription.add(
      this.scheduler.schedule(() => {
        this.scheduled.delete(name);
        this.step(name);
      }, 0),
    );
  }

  /** One write towards where the CRD is going: rules 1, 2 and 3; its event schedules the next. */
  private step(name: string): void {
    const crd = this.store.get(customResourceDefinitions, undefined, name);
    if (crd === undefined) return;
    const now = timestamp();
    try {
      if (crd.metadata.deletionTimestamp !== undefined) return this.finalize(crd, now);
      if (!sameNames(crd.spec.names, crd.status?.acceptedNames) || !isConditionTrue(crd, 'NamesAccepted')) return void this.write(namesAccepted(crd, now));
      if (!isConditionTrue(crd, 'Established')) this.write(established(crd, now));
    } catch (error) {
      // The CRD changed or went in between: its next event schedules another step.
      if (!(error instanceof ApiStatusError)) throw error;
    }
  }

  /** Rule 3. */
  private finalize(crd: CustomResourceDefinition, now: string): void {
    if (!(crd.metadata.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    if (!isConditionTrue(crd, 'Established')) {
      return this.removeFinalizer(withCondition(crd, { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' }, now));
    }
    const terminating = crd.status?.conditions?.find((condition) => condition.type === 'Terminating');
    if (terminating?.reason !== 'InstanceDeletionInProgress') {
      return this.write(withCondition(crd, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }, now));
    }
    const resource = storageResourceOf(crd);
    for (const object of this.store.list(resource)) {
      if (object.metadata.deletionTimestamp === undefined) this.store.delete(resource, object.metadata.namespace, object.metadata.name);
    }
    if (this.store.list(resource).length === 0) {
      return this.removeFinalizer(withCondition(crd, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, now));
    }
    // Objects held by their own finalizers: try again once each goes.
    if (this.waiting.has(crd.metadata.name)) return;
    const stop = this.store.subscribe(resource, (event) => {
      if (event.type === 'DELETED') this.schedule(crd.metadata.name);
    });
    this.waiting.set(crd.metadata.name, stop);
  }

  private removeFinalizer(crd: CustomResourceDefinition): void {
    this.waiting.get(crd.metadata.name)?.();
    this.waiting.delete(crd.metadata.name);
    this.write({ ...crd, metadata: { ...crd.metadata, finalizers: (crd.metadata.finalizers ?? []).filter((finalizer) => finalizer !== CRD_CLEANUP_FINALIZER) } });
  }

  private write(crd: CustomResourceDefinition): void {
    this.store.update(customResourceDefinitions, crd);
  }
}

function sameNames(spec: CustomResourceDefinition['spec']['names'], accepted: CustomResourceDefinition['spec']['names'] | undefined): boolean {
  return accepted !== undefined && JSON.stringify(spec) === JSON.stringify(accepted);
}

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
