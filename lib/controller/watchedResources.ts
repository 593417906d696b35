import type { KubeObject } from '../base/object';
import type { Informer } from '../informer/informer';
import type { Resource } from '../resources/resource';
import { OWNER_INDEX } from '../store/indexers';
import { parseFieldSelector, parseLabelSelector } from '../store/selector';
import type { Snapshot } from '../store/snapshot';
import type { ControllerSnapshots } from './controllerRequest';

/**
 * The informers of one controller, one per resource it watches (the primary first), and the
 * {@link ControllerSnapshots} view over their snapshots.
 */

/** The scope an informer was asked for. */
export interface WatchScope {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

/** One resource a controller watches: its informer and the scope it was made for. */
export interface WatchedResource {
  readonly resource: Resource<KubeObject>;
  readonly informer: Informer<KubeObject>;
  readonly scope: WatchScope;
  /**
   * Whether the informer can show an object: it is in the scope's namespace and matches its
   * selectors (a field selector read by dotted path, as the API server's field labels mostly are).
   */
  readonly shows: (object: KubeObject) => boolean;
}

/** `group/plural`: one informer per resource in a controller. */
export function resourceId(resource: Resource<KubeObject>): string {
  return `${resource.group}/${resource.plural}`;
}

/** `configmaps`, `widgets.example.com`: how the API server names a resource. */
export function qualifiedName(resource: Resource<KubeObject>): string {
  return resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;
}

/** The watched resource for an informer made with `scope`. @throws SelectorSyntaxError for a selector that does not parse */
export function watchedResource(resource: Resource<KubeObject>, informer: Informer<KubeObject>, scope: WatchScope): WatchedResource {
  const labels = parseLabelSelector(scope.labelSelector ?? '');
  const fields = parseFieldSelector(scope.fieldSelector ?? '');
  const namespace = resource.namespaced ? scope.namespace : undefined;
  return {
    resource,
    informer,
    scope,
    shows: (object) =>
      (namespace === undefined || namespace === '' || object.metadata.namespace === namespace) &&
      labels.matches(object.metadata.labels) &&
      fields.matches((field) => fieldText(object, field)),
  };
}

/** The snapshots of a controller's informers, as a reconcile reads them. */
export class WatchedSnapshots implements ControllerSnapshots {
  constructor(
    private readonly watched: readonly WatchedResource[],
    private readonly indexOf: ReadonlyMap<string, number>,
    private readonly snapshots: readonly Snapshot<KubeObject>[],
  ) {}

  of<R extends KubeObject>(resource: Resource<R>): Snapshot<R> {
    const index = this.indexOf.get(resourceId(resource));
    if (index === undefined) {
      const names = this.watched.map((entry) => qualifiedName(entry.resource)).join(', ');
      throw new Error(`${qualifiedName(resource)} is not watched by this controller: it watches ${names}`);
    }
    return this.snapshots[index] as unknown as Snapshot<R>;
  }

  owned<R extends KubeObject>(resource: Resource<R>, owner: KubeObject): R[] {
    const uid = owner.metadata.uid;
    const snapshot = this.of(resource);
    return uid === undefined || uid === '' ? [] : snapshot.byIndex(OWNER_INDEX, uid);
  }
}

function fieldText(object: KubeObject, path: string): string | undefined {
  let current: unknown = object;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return typeof current === 'string' || typeof current === 'number' || typeof current === 'boolean' ? String(current) : undefined;
}
