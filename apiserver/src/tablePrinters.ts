import type { Resource } from 'rx-informer';
import type { KubeObject } from 'rx-informer';
import { isCustomResource } from './builtinResources';
import { eventPrinter, eventsV1Printer } from './eventTable';
import { ageOf } from './humanDuration';
import { podPrinter } from './podTable';
import { AGE_COLUMN, column, CREATION_TIMESTAMP_DESCRIPTION, NAME_COLUMN, type TableCell, type TableColumn, type TablePrinter } from './tableColumns';

/**
 * The table convertors of the API server, per kind: the built-in printers of kubernetes
 * `pkg/printers/internalversion/printers.go` for the kinds the loopback server serves, the
 * default columns custom resources get (apiextensions-apiserver: Name and an Age `date` column,
 * `serveDefaultColumnsIfEmpty`), and the generic default (apiserver `registry/rest/table.go`:
 * Name and Created At) for any other built-in kind. The API server fills every column, `-o wide`
 * ones included (`printers.GenerateOptions{Wide: true}`); kubectl shows the priority-1 ones only
 * with `-o wide`.
 *
 * Fields the API server defaults on write and the loopback store does not are read with their
 * defaults: a Deployment's `replicas` (1), a Service's `type` (ClusterIP) and port `protocol`
 * (TCP), a Secret's `type` (Opaque).
 */

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record) : [];
}

function text(value: unknown, otherwise = ''): string {
  return typeof value === 'string' && value !== '' ? value : otherwise;
}

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** What the printers read of an object: its members as JSON, and its name and age. */
interface ObjectView {
  readonly name: string;
  readonly age: (now: number) => string;
  readonly body: Json;
  readonly meta: Json;
  readonly spec: Json;
  readonly status: Json;
}

function parts(object: KubeObject): ObjectView {
  const body = object as unknown as Json;
  const meta = record(body['metadata']);
  return { name: object.metadata.name, age: (now) => ageOf(meta['creationTimestamp'], now), body, meta, spec: record(body['spec']), status: record(body['status']) };
}

/** `labels.FormatLabels`: sorted `k=v` pairs, `<none>` when empty. */
function formatLabels(map: unknown): string {
  const entries = Object.entries(record(map)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([key, value]) => `${key}=${String(value)}`).join(',');
}

/** `metav1.LabelSelectorAsSelector(s).String()`: requirements sorted by key. */
function selectorString(selector: unknown): string {
  const { matchLabels, matchExpressions } = record(selector);
  const requirements: [string, string][] = Object.entries(record(matchLabels)).map(([key, value]) => [key, `${key}=${String(value)}`]);
  for (const expression of list(matchExpressions)) {
    const key = text(expression['key']);
    const values = (Array.isArray(expression['values']) ? expression['values'].map(String) : []).sort().join(',');
    const operator = expression['operator'];
    const rendered =
      operator === 'In' ? `${key} in (${values})` : operator === 'NotIn' ? `${key} notin (${values})` : operator === 'DoesNotExist' ? `!${key}` : key;
    requirements.push([key, rendered]);
  }
  return requirements
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, rendered]) => rendered)
    .join(',');
}

/** `layoutContainerCells`: container names and images, comma-separated. */
function containerCells(podSpec: Json): [string, string] {
  const containers = list(podSpec['containers']);
  return [containers.map((c) => text(c['name'])).join(','), containers.map((c) => text(c['image'])).join(',')];
}

const CONTAINERS_COLUMN = column('Containers', 'string', 'Names of each container in the template.', 1);
const IMAGES_COLUMN = column('Images', 'string', 'Images referenced by each container in the template.', 1);

const deploymentPrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', 'Number of the pod with ready state'),
    column('Up-to-date', 'string', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.'),
    column('Available', 'string', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.'),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    column('Selector', 'string', 'Label selector for pods.', 1),
  ],
  row(object, now) {
    const { name, age, spec, status } = parts(object);
    const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
    const [names, images] = containerCells(record(record(spec['template'])['spec']));
    return {
      cells: [name, `${count(status['readyReplicas'])}/${desired}`, count(status['updatedReplicas']), count(status['availableReplicas']), age(now), names, images, selectorString(spec['selector'])],
    };
  },
};

/** `getServiceExternalIP(svc, wide=true)`. */
function externalIP(type: string, spec: Json, status: Json): string {
  const externalIPs = Array.isArray(spec['externalIPs']) ? spec['externalIPs'].map(String) : [];
  switch (type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = list(record(status['loadBalancer'])['ingress']).map((i) => text(i['ip']) || text(i['hostname'])).filter((address) => address !== '');
      const balancers = [...new Set(ingress)].sort();
      if (externalIPs.length > 0) return [...balancers, ...externalIPs].join(',');
      return balancers.length > 0 ? balancers.join(',') : '<pending>';
    }
    case 'ExternalName':
      return text(spec['externalName']);
    default:
      return '<unknown>';
  }
}

const servicePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', 'type determines how the Service is exposed.'),
    column('Cluster-IP', 'string', 'clusterIP is the IP address of the service and is usually assigned randomly.'),
    column('External-IP', 'string', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
    column('Port(s)', 'string', 'The list of ports that are exposed by this service.'),
    AGE_COLUMN,
    column('Selector', 'string', 'Route service traffic to pods with label keys and values matching this selector.', 1),
  ],
  row(object, now) {
    const { name, age, spec, status } = parts(object);
    const type = text(spec['type'], 'ClusterIP');
    const clusterIPs = Array.isArray(spec['clusterIPs']) ? spec['clusterIPs'].map(String) : [];
    const clusterIP = clusterIPs[0] ?? text(spec['clusterIP'], '<none>');
    const ports = list(spec['ports'])
      .map((port) => {
        const protocol = text(port['protocol'], 'TCP');
        return count(port['nodePort']) > 0 ? `${count(port['port'])}:${count(port['nodePort'])}/${protocol}` : `${count(port['port'])}/${protocol}`;
      })
      .join(',');
    return { cells: [name, type, clusterIP, externalIP(type, spec, status), ports === '' ? '<none>' : ports, age(now), formatLabels(spec['selector'])] };
  },
};

/** `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and the `kubernetes.io/role` label. */
function nodeRoles(labels: unknown): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(record(labels))) {
    if (key.startsWith('node-role.kubernetes.io/') && key.length > 'node-role.kubernetes.io/'.length) roles.add(key.slice('node-role.kubernetes.io/'.length));
    else if (key === 'kubernetes.io/role' && value !== '') roles.add(String(value));
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

const nodePrinter: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', 'The status of the node'),
    column('Roles', 'string', 'The roles of the node'),
    AGE_COLUMN,
    column('Version', 'string', 'Kubelet Version reported by the node.'),
    column('Internal-IP', 'string', 'List of addresses reachable to the node.', 1),
    column('External-IP', 'string', 'List of addresses reachable to the node.', 1),
    column('OS-Image', 'string', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
    column('Kernel-Version', 'string', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
    column('Container-Runtime', 'string', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
  ],
  row(object, now) {
    const { name, age, spec, status, meta } = parts(object);
    const ready = list(status['conditions']).find((c) => c['type'] === 'Ready');
    const states = [ready === undefined ? 'Unknown' : ready['status'] === 'True' ? 'Ready' : 'NotReady', ...(spec['unschedulable'] === true ? ['SchedulingDisabled'] : [])];
    const info = record(status['nodeInfo']);
    const address = (type: string): string => text(list(status['addresses']).find((a) => a['type'] === type)?.['address'], '<none>');
    return {
      cells: [
        name,
        states.join(','),
        nodeRoles(meta['labels']),
        age(now),
        text(info['kubeletVersion']),
        address('InternalIP'),
        address('ExternalIP'),
        text(info['osImage'], '<unknown>'),
        text(info['kernelVersion'], '<unknown>'),
        text(info['containerRuntimeVersion'], '<unknown>'),
      ],
    };
  },
};

/** A printer of Name, some cells, Age. */
function simplePrinter(middle: readonly TableColumn[], cells: (view: ObjectView) => TableCell[]): TablePrinter {
  return {
    columns: [NAME_COLUMN, ...middle, AGE_COLUMN],
    row(object, now) {
      const view = parts(object);
      return { cells: [view.name, ...cells(view), view.age(now)] };
    },
  };
}

const keyCount = (...maps: unknown[]): number => new Set(maps.flatMap((map) => Object.keys(record(map)))).size;

const BUILTIN_PRINTERS: Readonly<Record<string, TablePrinter>> = {
  '/pods': podPrinter,
  'apps/deployments': deploymentPrinter,
  '/services': servicePrinter,
  '/nodes': nodePrinter,
  '/namespaces': simplePrinter([column('Status', 'string', 'The status of the namespace')], ({ status }) => [text(status['phase'])]),
  '/configmaps': simplePrinter([column('Data', 'string', 'Data contains the configuration data.')], ({ body }) => [keyCount(body['data']) + keyCount(body['binaryData'])]),
  // The API server keeps stringData in data (it converts one into the other on write).
  '/secrets': simplePrinter(
    [column('Type', 'string', 'Used to facilitate programmatic handling of secret data.'), column('Data', 'string', 'Data contains the secret data.')],
    ({ body }) => [text(body['type'], 'Opaque'), keyCount(body['data'], body['stringData'])],
  ),
  '/events': eventPrinter,
  'events.k8s.io/events': eventsV1Printer,
  'coordination.k8s.io/leases': simplePrinter([column('Holder', 'string', 'holderIdentity contains the identity of the holder of a current lease.')], ({ spec }) => [text(spec['holderIdentity'])]),
};

/**
 * Custom resources without printer columns: Name, and an Age `date` column whose cell the API
 * server turns into a duration (`ConvertToHumanReadableDateType`), null when the object has none.
 */
const customResourcePrinter: TablePrinter = {
  columns: [NAME_COLUMN, { name: 'Age', type: 'date', format: '', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 }],
  row(object, now) {
    const created = object.metadata.creationTimestamp;
    return { cells: [object.metadata.name, typeof created === 'string' ? ageOf(created, now) : null] };
  },
};

/** `rest.NewDefaultTableConvertor`: Name and Created At, an RFC 3339 time (Go's zero time when unset). */
const defaultPrinter: TablePrinter = {
  columns: [NAME_COLUMN, { name: 'Created At', type: 'date', format: '', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 }],
  row(object) {
    const created = Date.parse(object.metadata.creationTimestamp ?? '');
    return { cells: [object.metadata.name, Number.isNaN(created) ? '0001-01-01T00:00:00Z' : new Date(created).toISOString().replace(/\.\d{3}Z$/, 'Z')] };
  },
};

/** The table convertor the API server uses for `resource`. */
export function printerFor(resource: Resource<KubeObject>): TablePrinter {
  if (isCustomResource(resource)) return customResourcePrinter;
  return BUILTIN_PRINTERS[`${resource.group}/${resource.plural}`] ?? defaultPrinter;
}
