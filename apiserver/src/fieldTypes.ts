import type { KubeObject, Resource } from 'rx-informer';
import type { JsonValue } from './fieldPath';

/**
 * What the loopback server knows of the kinds it serves beyond JSON: which lists merge item by item
 * and by which key, which lists are sets, and which objects are replaced whole. It is one table for
 * the two engines that need it, read from the markers of k8s.io/api's Go types
 * (`staging/src/k8s.io/api/core/v1/types.go`, `apps/v1/types.go`, `meta/v1/types.go`):
 *
 * - the strategic merge patch (`strategicMergePatch.ts`) reads `patchStrategy:"merge"` and
 *   `patchMergeKey` (`containers` merge by `name`, `finalizers` is a union);
 * - server-side apply (`managedFields.ts`) reads `+listType=map` with its `+listMapKey`s (container
 *   `ports` by `containerPort` and `protocol`, the latter defaulting to `TCP`), `+listType=set`, and
 *   `+structType=atomic` (a LabelSelector, an ObjectReference). The OpenAPI the API server builds
 *   from them turns a `patchMergeKey` without `+listType` into a map list keyed by that field, and
 *   a `patchStrategy:"merge"` list of scalars into a set (kube-openapi `schemaconv`).
 *
 * Everything not in the table is what the API server makes of a field without markers: an object
 * merges member by member, a list is atomic (replaced whole), a scalar is a leaf. Custom resources
 * get only the table's `metadata` (their CRD schema has no list markers here).
 */

/** How one field (an object, or a list) merges. */
export interface FieldType {
  /** The members whose merging differs from the default, by name. */
  readonly fields?: Readonly<Record<string, FieldType>>;
  /** An object replaced whole, never merged member by member (`+structType=atomic`). */
  readonly atomic?: true;
  /** A list that is not atomic. */
  readonly list?: ListType;
}

/** A list merged item by item (`+listType=map`) or value by value (`+listType=set`). */
export type ListType =
  | {
      readonly type: 'map';
      /** `+listMapKey`s: the fields that identify an item. */
      readonly keys: readonly string[];
      /** Values of key fields an item may leave out (the OpenAPI `default`s, as `protocol: TCP`). */
      readonly keyDefaults?: Readonly<Record<string, JsonValue>>;
      /** `patchMergeKey`, what the strategic merge patch matches items by. */
      readonly patchMergeKey: string;
      /** The type of the items. */
      readonly items?: FieldType;
    }
  | {
      readonly type: 'set';
      /** `patchStrategy:"merge"`: the strategic merge patch makes a union too. */
      readonly patchMerge: boolean;
    };

/** The default of every field: merged member by member, lists atomic. */
export const GRANULAR: FieldType = Object.freeze({});

function mapList(keys: readonly string[], items?: FieldType, keyDefaults?: Readonly<Record<string, JsonValue>>): FieldType {
  return { list: { type: 'map', keys, patchMergeKey: keys[0]!, ...(items === undefined ? {} : { items }), ...(keyDefaults === undefined ? {} : { keyDefaults }) } };
}

const ATOMIC: FieldType = { atomic: true };
const MERGED_SET: FieldType = { list: { type: 'set', patchMerge: true } };
const TCP = { protocol: 'TCP' } as const;

/** `metav1.ObjectMeta`: finalizers a set, ownerReferences by uid. */
const OBJECT_META: FieldType = { fields: { finalizers: MERGED_SET, ownerReferences: mapList(['uid']) } };

/** `+structType=atomic` LabelSelector. */
const LABEL_SELECTOR = ATOMIC;

const CONTAINER: FieldType = {
  fields: {
    ports: mapList(['containerPort', 'protocol'], undefined, TCP),
    env: mapList(['name']),
    volumeMounts: mapList(['mountPath']),
    volumeDevices: mapList(['devicePath']),
  },
};

const POD_SPEC: FieldType = {
  fields: {
    containers: mapList(['name'], CONTAINER),
    initContainers: mapList(['name'], CONTAINER),
    ephemeralContainers: mapList(['name'], CONTAINER),
    volumes: mapList(['name']),
    imagePullSecrets: mapList(['name']),
    hostAliases: mapList(['ip']),
    topologySpreadConstraints: mapList(['topologyKey', 'whenUnsatisfiable'], { fields: { labelSelector: LABEL_SELECTOR } }),
    resourceClaims: mapList(['name']),
    schedulingGates: mapList(['name']),
  },
};

const CONDITIONS = mapList(['type']);

/** The types below `metadata`, by resource (`group/plural`). */
const RESOURCE_TYPES: Readonly<Record<string, Readonly<Record<string, FieldType>>>> = {
  '/pods': {
    spec: POD_SPEC,
    status: { fields: { conditions: CONDITIONS, podIPs: mapList(['ip']), hostIPs: mapList(['ip']), resourceClaimStatuses: mapList(['name']) } },
  },
  'apps/deployments': {
    spec: { fields: { selector: LABEL_SELECTOR, template: { fields: { metadata: OBJECT_META, spec: POD_SPEC } } } },
    status: { fields: { conditions: CONDITIONS } },
  },
  '/services': { spec: { fields: { ports: mapList(['port', 'protocol'], undefined, TCP) } }, status: { fields: { conditions: CONDITIONS } } },
  '/nodes': { spec: { fields: { podCIDRs: MERGED_SET } }, status: { fields: { conditions: CONDITIONS, addresses: mapList(['type']) } } },
  '/namespaces': { status: { fields: { conditions: CONDITIONS } } },
  // `+structType=atomic` ObjectReference.
  '/events': { involvedObject: ATOMIC, related: ATOMIC },
  'events.k8s.io/events': { regarding: ATOMIC, related: ATOMIC },
};

const rootTypes = new Map<string, FieldType>();

/** The type of a whole object of `resource`: its `metadata`, and what the table knows below. */
export function rootTypeOf(resource: Resource<KubeObject>): FieldType {
  const id = `${resource.group}/${resource.plural}`;
  let root = rootTypes.get(id);
  if (root === undefined) {
    root = { fields: { metadata: OBJECT_META, ...RESOURCE_TYPES[id] } };
    rootTypes.set(id, root);
  }
  return root;
}

/** The type of member `name` of an object of type `type`. */
export function memberType(type: FieldType, name: string): FieldType {
  return type.fields?.[name] ?? GRANULAR;
}
