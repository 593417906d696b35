import { configMaps, deployments, nodes, pods, secrets, services } from '../../lib/resources/builtins';
import { defineResource } from '../../lib/resources/resource';
import { widgets } from '../../apiserver/src/builtinResources';
import { humanDuration } from '../../apiserver/src/humanDuration';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { get, openWatch } from './httpHelpers';

/**
 * Server-side printing: lists, GETs and watches answered as `meta.k8s.io` Tables when Accept asks
 * for one, with the columns and cells of the API server's printers.
 */

const KUBECTL_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const TABLE = { Accept: KUBECTL_ACCEPT };

let server: ApiServer;
beforeEach(async () => {
  server = await startApiServer();
});
afterEach(() => server.close());

/** The time `ms` ago, as a creationTimestamp or finishedAt. */
const ago = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

type Row = { cells: unknown[]; conditions?: unknown[]; object: any };
const rowsOf = (json: { rows: Row[] }): Record<string, unknown[]> => Object.fromEntries(json.rows.map((row) => [row.cells[0] as string, row.cells]));

describe('humanDuration (apimachinery duration.HumanDuration)', () => {
  it.each([
    [-3_000, '<invalid>'],
    [-1_500, '0s'],
    [0, '0s'],
    [119_999, '119s'],
    [120_000, '2m'],
    [200_000, '3m20s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [(5 * 60 + 10) * 60_000, '5h10m'],
    [47 * 3_600_000, '47h'],
    [51 * 3_600_000, '2d3h'],
    [8 * 86_400_000, '8d'],
    [729 * 86_400_000, '729d'],
    [750 * 86_400_000, '2y20d'],
    [9 * 365 * 86_400_000, '9y'],
  ])('%d ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('pods as a Table', () => {
  it('lists with the pod columns (priority 1 for -o wide), one row per pod, each carrying its metadata as a PartialObjectMetadata', async () => {
    server.store.create(pods, {
      metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' } },
      spec: { containers: [{ name: 'a' }, { name: 'b' }], nodeName: 'node-1' },
      status: {
        phase: 'Running',
        podIP: '10.0.0.7',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          { name: 'a', image: 'a', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
          {
            name: 'b',
            image: 'b',
            imageID: '',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: ago(600_000) } },
          },
        ],
      },
    });
    const reply = await get(server, '/api/v1/namespaces/ns/pods', { headers: TABLE });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    const table = reply.json;
    expect([table.kind, table.apiVersion, table.metadata.resourceVersion]).toEqual(['Table', 'meta.k8s.io/v1', server.store.resourceVersion]);
    expect(table.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`)).toEqual([
      'Name:0',
      'Ready:0',
      'Status:0',
      'Restarts:0',
      'Age:0',
      'IP:1',
      'Node:1',
      'Nominated Node:1',
      'Readiness Gates:1',
    ]);
    expect(table.columnDefinitions[0]).toMatchObject({ type: 'string', format: 'name', description: expect.stringMatching(/^Name must be unique within a namespace/) });
    const [row] = table.rows as Row[];
    expect(row!.cells).toEqual(['web', '1/2', 'CrashLoopBackOff', '3 (10m ago)', expect.stringMatching(/^\d+s$/), '10.0.0.7', 'node-1', '<none>', '<none>']);
    expect(row!.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: server.store.get(pods, 'ns', 'web')!.metadata });
  });

  it('says what a kubelet would: init progress, terminated reasons, Completed pods as rows with a condition, Terminating', async () => {
    const create = (name: string, spec: Record<string, unknown>, status: Record<string, unknown>, metadata: object = {}): void =>
      // Partial container statuses: the printer reads only what it needs (the store does not validate).
      void server.store.create(pods, { metadata: { name, namespace: 'ns', ...metadata }, spec, status } as never);
    create('init', { initContainers: [{ name: 'i1' }, { name: 'i2' }], containers: [{ name: 'c' }] }, {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'i1', state: { terminated: { exitCode: 0 } } }, { name: 'i2', state: { running: {} } }],
      containerStatuses: [{ name: 'c', state: { waiting: { reason: 'PodInitializing' } } }],
    });
    create('init-failed', { initContainers: [{ name: 'i1' }], containers: [{ name: 'c' }] }, {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'i1', restartCount: 2, state: { terminated: { exitCode: 3 } } }],
    });
    create('done', { containers: [{ name: 'c' }] }, { phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] });
    create('oom', { containers: [{ name: 'c' }] }, { phase: 'Running', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] });
    create('gated', { containers: [{ name: 'c' }] }, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }] });
    create('leaving', { containers: [{ name: 'c' }] }, { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] }, { finalizers: ['example.com/hold'] });
    server.store.delete(pods, 'ns', 'leaving');
    create('sidecar', { initContainers: [{ name: 's', restartPolicy: 'Always' }], containers: [{ name: 'c' }], readinessGates: [{ conditionType: 'example.com/gate' }] }, {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }, { type: 'example.com/gate', status: 'True' }],
      initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} } }],
      containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }],
    });
    const table = (await get(server, '/api/v1/namespaces/ns/pods', { headers: TABLE })).json;
    const rows = rowsOf(table);
    const summary = (name: string): unknown[] => [rows[name]![1], rows[name]![2], rows[name]![3]];
    expect(summary('init')).toEqual(['0/1', 'Init:1/2', '0']);
    expect(summary('init-failed')).toEqual(['0/1', 'Init:ExitCode:3', '2']);
    expect(summary('done')).toEqual(['0/1', 'Completed', '0']);
    expect(summary('oom')).toEqual(['0/1', 'OOMKilled', '0']);
    expect(summary('gated')).toEqual(['0/1', 'SchedulingGated', '0']);
    expect(summary('leaving')).toEqual(['1/1', 'Terminating', '0']);
    expect(summary('sidecar')).toEqual(['2/2', 'Running', '0']);
    expect(rows['sidecar']![8]).toBe('1/1');
    const done = (table.rows as Row[]).find((row) => row.cells[0] === 'done')!;
    expect(done.conditions).toEqual([{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }]);
    expect((table.rows as Row[]).find((row) => row.cells[0] === 'oom')!.conditions).toBeUndefined();
  });

  it('pages a Table as the list it prints: limit, continue and remainingItemCount in its metadata', async () => {
    for (const name of ['a', 'b', 'c']) server.store.create(pods, { metadata: { name, namespace: 'ns' } });
    const first = (await get(server, '/api/v1/namespaces/ns/pods?limit=2', { headers: TABLE })).json;
    expect(first.rows.map((row: Row) => row.cells[0])).toEqual(['a', 'b']);
    expect(first.metadata).toEqual({ resourceVersion: expect.any(String), continue: expect.any(String), remainingItemCount: 1 });
    const second = (await get(server, `/api/v1/namespaces/ns/pods?limit=2&continue=${encodeURIComponent(first.metadata.continue)}`, { headers: TABLE })).json;
    expect(second.rows.map((row: Row) => row.cells[0])).toEqual(['c']);
    expect(second.metadata).toEqual({ resourceVersion: first.metadata.resourceVersion });
  });
});

describe('other kinds as Tables', () => {
  it('prints deployments, services, nodes, namespaces, config maps and secrets with their printers\' columns', async () => {
    server.store.create(deployments, {
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] } as never,
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1' }, { name: 'proxy', image: 'envoy:1' }] } },
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 } as never,
    });
    server.store.create(services, {
      metadata: { name: 'lb', namespace: 'ns' },
      spec: { type: 'LoadBalancer', clusterIP: '10.96.0.10', ports: [{ port: 80, nodePort: 30080 }, { port: 53, protocol: 'UDP' }], selector: { app: 'web', tier: 'front' } },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } },
    } as never);
    server.store.create(nodes, {
      metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'master' } },
      spec: { unschedulable: true },
      status: { conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], nodeInfo: { kubeletVersion: 'v1.36.0', osImage: 'Debian' } },
    } as never);
    server.store.create(configMaps, { metadata: { name: 'cfg', namespace: 'ns' }, data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } } as never);
    server.store.create(secrets, { metadata: { name: 'token', namespace: 'ns' }, data: { a: 'MQ==' }, stringData: { b: '2' } } as never);

    const print = async (path: string): Promise<{ columns: string[]; rows: Record<string, unknown[]> }> => {
      const table = (await get(server, path, { headers: TABLE })).json;
      return { columns: table.columnDefinitions.map((c: { name: string }) => c.name), rows: rowsOf(table) };
    };
    const deployment = await print('/apis/apps/v1/namespaces/ns/deployments');
    expect(deployment.columns).toEqual(['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector']);
    expect(deployment.rows['web']).toEqual(['web', '2/3', 3, 2, expect.stringMatching(/s$/), 'web,proxy', 'nginx:1,envoy:1', 'app=web,tier in (back,front)']);
    const service = await print('/api/v1/namespaces/ns/services');
    expect(service.columns).toEqual(['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector']);
    expect(service.rows['lb']).toEqual(['lb', 'LoadBalancer', '10.96.0.10', '203.0.113.7', '80:30080/TCP,53/UDP', expect.any(String), 'app=web,tier=front']);
    const node = await print('/api/v1/nodes');
    expect(node.columns).toEqual(['Name', 'Status', 'Roles', 'Age', 'Version', 'Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
    expect(node.rows['node-1']).toEqual(['node-1', 'Ready,SchedulingDisabled', 'control-plane,master', expect.any(String), 'v1.36.0', '10.0.0.1', '<none>', 'Debian', '<unknown>', '<unknown>']);
    const namespace = await print('/api/v1/namespaces');
    expect(namespace.columns).toEqual(['Name', 'Status', 'Age']);
    expect(namespace.rows['default']).toEqual(['default', 'Active', expect.any(String)]);
    expect((await print('/api/v1/namespaces/ns/configmaps')).rows['cfg']).toEqual(['cfg', 3, expect.any(String)]);
    const secret = await print('/api/v1/namespaces/ns/secrets');
    expect(secret.columns).toEqual(['Name', 'Type', 'Data', 'Age']);
    expect(secret.rows['token']).toEqual(['token', 'Opaque', 2, expect.any(String)]);
  });

  it('prints custom resources with Name and an Age date column, and other built-in kinds with Name and Created At', async () => {
    server.store.create(widgets, { metadata: { name: 'blue', namespace: 'ns' }, spec: { size: 3 } });
    const widget = (await get(server, '/apis/example.com/v1/namespaces/ns/widgets', { headers: TABLE })).json;
    expect(widget.columnDefinitions.map((c: { name: string; type: string }) => `${c.name}:${c.type}`)).toEqual(['Name:string', 'Age:date']);
    expect(widget.rows[0].cells).toEqual(['blue', expect.stringMatching(/^\d+s$/)]);
    await server.close();
    const roles = defineResource({ group: 'rbac.authorization.k8s.io', version: 'v1', plural: 'roles', kind: 'Role', namespaced: true });
    server = await startApiServer({ resources: [roles] });
    const created = server.store.create(roles, { metadata: { name: 'reader', namespace: 'ns' } });
    const role = (await get(server, '/apis/rbac.authorization.k8s.io/v1/namespaces/ns/roles', { headers: TABLE })).json;
    expect(role.columnDefinitions.map((c: { name: string; type: string }) => `${c.name}:${c.type}`)).toEqual(['Name:string', 'Created At:date']);
    expect(role.rows[0].cells).toEqual(['reader', created.metadata.creationTimestamp]);
  });
});

describe('negotiation and options', () => {
  beforeEach(() => {
    server.store.create(pods, { metadata: { name: 'p', namespace: 'ns' } });
  });

  it('answers a GET of one object as a one-row Table at its resourceVersion', async () => {
    const table = (await get(server, '/api/v1/namespaces/ns/pods/p', { headers: TABLE })).json;
    expect([table.kind, table.metadata, table.rows.length, table.rows[0].cells[0]]).toEqual(['Table', { resourceVersion: server.store.get(pods, 'ns', 'p')!.metadata.resourceVersion }, 1, 'p']);
  });

  it('serves meta.k8s.io/v1beta1 Tables, and plain JSON to any Accept without a Table it serves first', async () => {
    const beta = (await get(server, '/api/v1/namespaces/ns/pods', { headers: { Accept: 'application/json;as=Table;v=v1beta1;g=meta.k8s.io' } })).json;
    expect([beta.kind, beta.apiVersion, beta.rows[0].object.apiVersion]).toEqual(['Table', 'meta.k8s.io/v1beta1', 'meta.k8s.io/v1beta1']);
    for (const accept of [
      'application/json',
      'application/json, */*',
      'application/json;as=Table;v=v2;g=meta.k8s.io,application/json',
      'application/json,application/json;as=Table;v=v1;g=meta.k8s.io',
      'application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5,application/json',
    ]) {
      expect([accept, (await get(server, '/api/v1/namespaces/ns/pods', { headers: { Accept: accept } })).json.kind]).toEqual([accept, 'PodList']);
    }
  });

  it('reads includeObject: Object gives the whole object, None none, anything else is the API server\'s 400', async () => {
    const whole = (await get(server, '/api/v1/namespaces/ns/pods?includeObject=Object', { headers: TABLE })).json;
    expect(whole.rows[0].object).toEqual(server.store.get(pods, 'ns', 'p'));
    const none = (await get(server, '/api/v1/namespaces/ns/pods?includeObject=None', { headers: TABLE })).json;
    expect(none.rows[0].object).toBeNull();
    const bad = await get(server, '/api/v1/namespaces/ns/pods?includeObject=Everything', { headers: TABLE });
    expect([bad.status, bad.json.reason, bad.json.message]).toEqual([
      400,
      'BadRequest',
      'Unable to convert to Table as requested: includeObject: Unsupported value: "Everything": supported values: "Metadata", "None", "Object"',
    ]);
  });

  it('watches as Tables: one row per event, column definitions on the first event only, errors as plain Statuses', async () => {
    const from = server.store.resourceVersion;
    const watch = await openWatch(server, `/api/v1/namespaces/ns/pods?watch=true&resourceVersion=${from}`, { headers: TABLE });
    try {
      const created = server.store.create(pods, { metadata: { name: 'q', namespace: 'ns' }, spec: { containers: [{ name: 'c' }] } });
      server.store.update(pods, { ...created, status: { phase: 'Running' } });
      server.store.delete(pods, 'ns', 'q');
      await watch.untilLines(3);
      const events = watch.events;
      expect(events.map((event) => [event.type, event.object.kind, event.object.rows[0].cells[0], event.object.rows[0].cells[2]])).toEqual([
        ['ADDED', 'Table', 'q', ''],
        ['MODIFIED', 'Table', 'q', 'Running'],
        ['DELETED', 'Table', 'q', 'Running'],
      ]);
      expect(events[0]!.object.columnDefinitions.map((c: { name: string }) => c.name)).toContain('Restarts');
      expect(events.slice(1).map((event) => event.object.columnDefinitions)).toEqual([null, null]);
      expect(events[2]!.object.metadata.resourceVersion).toBe(server.store.resourceVersion);
    } finally {
      watch.close();
    }
    server.store.compact();
    const expired = await openWatch(server, `/api/v1/namespaces/ns/pods?watch=true&resourceVersion=${from}`, { headers: TABLE });
    await expired.untilClosed();
    expect(expired.events.map((event) => [event.type, event.object.kind, event.object.code])).toEqual([['ERROR', 'Status', 410]]);
  });

  it('prints each initial event of a watch, and its bookmarks, as Tables', async () => {
    const watch = await openWatch(server, '/api/v1/namespaces/ns/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true', {
      headers: TABLE,
    });
    try {
      await watch.untilLines(2);
      const [added, bookmark] = watch.events;
      expect([added!.type, added!.object.rows[0].cells[0]]).toEqual(['ADDED', 'p']);
      expect([bookmark!.type, bookmark!.object.kind, bookmark!.object.metadata.resourceVersion]).toEqual(['BOOKMARK', 'Table', server.store.resourceVersion]);
      expect(bookmark!.object.rows[0].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    } finally {
      watch.close();
    }
  });
});
