import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployments, pods, type Deployment } from '../../lib/resources/builtins';
import { createChurn, makePod, seededRandom } from '../../apiserver/src/churn';
import { widgets, type Widget } from '../../apiserver/src/builtinResources';
import type { ApiServer } from '../../apiserver/src/server';
import { SERVER_VERSIONS } from '../../apiserver/src/serverVersion';
import { describeWithKubectl, kubectl as runKubectl, printed, rows, spawnKubectl, startKubectlCluster as startCluster, type Result } from './kubectlRunner';
import { stopCluster, waitForWatch, type Cluster } from './realClients';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';

/**
 * The real kubectl against the loopback API server: discovery, get (one namespace, all, chunked,
 * by label, built-in, apps/v1 and custom resources), get -w, create -f and delete.
 */

const kubectl = (cluster: Cluster, ...args: string[]): Promise<Result> => runKubectl(cluster, args);

function podNames(server: ApiServer, namespace?: string, where: (labels: Readonly<Record<string, string>>) => boolean = () => true): string[] {
  return server.store
    .list(pods, namespace)
    .filter((pod) => where(pod.metadata.labels ?? {}))
    .map((pod) => pod.metadata.name)
    .sort();
}

describeWithKubectl('kubectl against the loopback API server (http, no token)', () => {
  let cluster: Cluster | undefined;
  let server: ApiServer;

  beforeAll(async () => {
    cluster = await startCluster({});
    server = cluster.server;
    createChurn(server.store, { seed: 4, namespaces: 2, pods: 12 }).populate();
  });
  afterAll(() => stopCluster(cluster));

  const run = (...args: string[]): Promise<Result> => kubectl(cluster as Cluster, ...args);

  it('kubectl is on PATH and runs', async () => {
    const result = await run('version', '--client');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Client Version: v1\.\d+/);
  });

  it('get pods -n NS discovers the API and lists exactly that namespace, with the pod columns the server prints', async () => {
    server.requests.clear();
    const result = await run('get', 'pods', '-n', 'ns-0');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const table = printed(result.stdout);
    expect(table.columns).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(table.rows.map((row) => row['NAME']).sort()).toEqual(podNames(server, 'ns-0'));
    // Generated pods run (1/1 Running) or wait for their container (0/1 ContainerCreating).
    for (const row of table.rows) {
      const running = server.store.get(pods, 'ns-0', row['NAME']!)?.status?.phase === 'Running';
      expect([row['READY'], row['STATUS'], row['RESTARTS']]).toEqual(running ? ['1/1', 'Running', '0'] : ['0/1', 'ContainerCreating', '0']);
      expect(row['AGE']).toMatch(/^\d+s$/);
    }
    expect(server.requests.entries.find((e) => e.verb === 'list')?.query).toMatchObject({ limit: '500' });
    // A fresh cache dir means real discovery against the server, then one namespaced list.
    const verbs = server.requests.entries.map((entry) => entry.verb);
    expect(verbs).toContain('discovery');
    expect(server.requests.entries.filter((e) => e.verb === 'list')).toEqual([expect.objectContaining({ resource: 'pods', namespace: 'ns-0', status: 200 })]);
  });

  it('get pods -A lists every namespace, with a NAMESPACE column', async () => {
    const result = await run('get', 'pods', '-A');
    expect(result.code).toBe(0);
    expect(printed(result.stdout).columns).toEqual(['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    const listed = rows(result.stdout);
    expect(listed.map((row) => `${row[0]}/${row[1]}`).sort()).toEqual(server.store.list(pods).map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`).sort());
    expect(new Set(listed.map((row) => row[0]))).toEqual(new Set(['ns-0', 'ns-1']));
  });

  it('get po -o wide (short name) adds IP, NODE, NOMINATED NODE and READINESS GATES', async () => {
    const wide = await run('get', 'po', '-n', 'ns-1', '-o', 'wide');
    expect(wide.code).toBe(0);
    const table = printed(wide.stdout);
    expect(table.columns).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
    expect(table.rows.map((row) => row['NAME']).sort()).toEqual(podNames(server, 'ns-1'));
    for (const row of table.rows) {
      const pod = server.store.get(pods, 'ns-1', row['NAME']!)!;
      expect([row['IP'], row['NODE'], row['NOMINATED NODE'], row['READINESS GATES']]).toEqual([pod.status?.podIP, pod.spec?.nodeName, '<none>', '<none>']);
    }
  });

  it('get namespaces prints NAME STATUS AGE', async () => {
    const result = await run('get', 'namespaces');
    expect(result.code).toBe(0);
    const table = printed(result.stdout);
    expect(table.columns).toEqual(['NAME', 'STATUS', 'AGE']);
    expect(table.rows.filter((row) => row['NAME']!.startsWith('ns-')).map((row) => `${row['NAME']} ${row['STATUS']}`)).toEqual(['ns-0 Active', 'ns-1 Active']);
  });

  it('get deployments (apps/v1) and get widgets (a custom resource) print their columns', async () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'shop-api', namespace: 'ns-0' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'api' } }, template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'ghcr.io/shop/api:1.0.0' }] } } },
    };
    server.store.create(deployments, deployment);
    const widget: Widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'blue-widget', namespace: 'ns-1' }, spec: { size: 3, color: 'blue' } };
    server.store.create(widgets, widget);

    const listedDeployments = await run('get', 'deployments', '-n', 'ns-0');
    expect(listedDeployments.code).toBe(0);
    const deploymentTable = printed(listedDeployments.stdout);
    expect(deploymentTable.columns).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    expect(deploymentTable.rows).toEqual([{ NAME: 'shop-api', READY: '0/2', 'UP-TO-DATE': '0', AVAILABLE: '0', AGE: expect.stringMatching(/^\d+s$/) }]);
    const wideDeployments = printed((await run('get', 'deploy', '-n', 'ns-0', '-o', 'wide')).stdout);
    expect(wideDeployments.rows[0]).toMatchObject({ CONTAINERS: 'api', IMAGES: 'ghcr.io/shop/api:1.0.0', SELECTOR: 'app=api' });
    const listedWidgets = await run('get', 'widgets', '-n', 'ns-1');
    expect(listedWidgets.code).toBe(0);
    // A custom resource without printer columns: the API server's NAME and AGE.
    expect(printed(listedWidgets.stdout)).toEqual({ columns: ['NAME', 'AGE'], rows: [{ NAME: 'blue-widget', AGE: expect.stringMatching(/^\d+s$/) }] });
    const none = await run('get', 'widgets', '-n', 'ns-0');
    expect(none.code).toBe(0);
    expect(none.stderr).toContain('No resources found in ns-0 namespace.');
  });

  it('get pods --chunk-size=2 pages with limit and continue and still lists every pod', async () => {
    server.requests.clear();
    const result = await run('get', 'pods', '-n', 'ns-0', '--chunk-size=2');
    expect(result.code).toBe(0);
    expect(rows(result.stdout).map((row) => row[0]).sort()).toEqual(podNames(server, 'ns-0'));
    const lists = server.requests.entries.filter((entry) => entry.verb === 'list' && entry.resource === 'pods');
    expect(lists.length).toBe(Math.ceil(podNames(server, 'ns-0').length / 2));
    expect(lists.every((entry) => entry.query['limit'] === '2' && entry.status === 200)).toBe(true);
    expect(lists.slice(1).every((entry) => (entry.query['continue'] ?? '') !== '')).toBe(true);
  });

  it('get pods -l app=NAME passes the label selector to the server', async () => {
    const app = server.store.list(pods, 'ns-1')[0]?.metadata.labels?.['app'] as string;
    const result = await run('get', 'pods', '-n', 'ns-1', '-l', `app=${app}`);
    expect(result.code).toBe(0);
    expect(rows(result.stdout).map((row) => row[0]).sort()).toEqual(podNames(server, 'ns-1', (labels) => labels['app'] === app));
    const none = await run('get', 'pods', '-A', '-l', 'app=no-such-app');
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('No resources found');
  });

  it('get pods -w prints the list, then a line for each later change, until killed', async () => {
    const child = spawnKubectl(cluster as Cluster, ['get', 'pods', '-n', 'ns-1', '-w']);
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const seen = (text: string): Promise<void> => eventually(() => expect(stdout).toContain(text), { timeoutMs: 20_000, intervalMs: 20 });
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      const existing = podNames(server, 'ns-1');
      await seen(existing[existing.length - 1] as string);
      expect(stdout.split('\n')[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      // The watch starts after the list; requests show it, then the store change reaches kubectl.
      await waitForWatch(server, 'pods');
      server.store.create(pods, makePod(seededRandom(8), 'ns-1', 'watched-new-pod'));
      await seen('watched-new-pod');
      server.store.delete(pods, 'ns-1', existing[0] as string);
      const linesOfDeleted = (): string[] => stdout.split('\n').filter((line) => line.startsWith(`${existing[0] as string} `));
      const linesBefore = linesOfDeleted().length;
      await eventually(() => expect(linesOfDeleted().length).toBeGreaterThan(linesBefore), { timeoutMs: 20_000, intervalMs: 20 });
    } finally {
      child.kill('SIGTERM');
      await within(closed, EVENTUALLY_MS, 'kubectl -w to exit after SIGTERM');
    }
  });

  it('create -f FILE --validate=false posts JSON and the pod lands in the store', async () => {
    const file = join((cluster as Cluster).dir, 'pod.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'from-file', namespace: 'ns-0', labels: { app: 'from-file' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }));
    const result = await run('create', '-f', file, '--validate=false');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('pod/from-file created');
    expect(server.store.get(pods, 'ns-0', 'from-file')?.metadata).toMatchObject({ labels: { app: 'from-file' }, uid: expect.any(String) });
    const again = await run('create', '-f', file, '--validate=false');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Error from server (AlreadyExists)');
  });

  it('delete pod NAME removes it from the store; deleting it again is NotFound', async () => {
    const victim = podNames(server, 'ns-0')[0] as string;
    const result = await run('delete', 'pod', victim, '-n', 'ns-0');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`pod "${victim}" deleted`);
    expect(server.store.get(pods, 'ns-0', victim)).toBeUndefined();
    const again = await run('delete', 'pod', victim, '-n', 'ns-0');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Error from server (NotFound): pods "${victim}" not found`);
  });
});

describeWithKubectl('kubectl against the loopback API server over https with a token', () => {
  let cluster: Cluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ tls: true, token: 's3cret' });
    createChurn(cluster.server.store, { seed: 5, namespaces: 2, pods: 6 }).populate();
  });
  afterAll(() => stopCluster(cluster));

  it('verifies the server with the CA in the kubeconfig and authenticates with the token', async () => {
    const { server } = cluster as Cluster;
    expect(server.url).toMatch(/^https:/);
    const result = await kubectl(cluster as Cluster, 'get', 'pods', '-A');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(rows(result.stdout).map((row) => `${row[0]}/${row[1]}`).sort()).toEqual(server.store.list(pods).map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`).sort());
    expect(server.requests.entries.filter((entry) => entry.status === 401)).toEqual([]);
  });

  it('is refused with 401 when the token is wrong', async () => {
    const { dir, server } = cluster as Cluster;
    const config = JSON.parse(server.kubeConfig.exportConfig()) as { users: { user: Record<string, unknown> }[] };
    config.users[0]!.user = { token: 'wrong' };
    const wrongConfig = join(dir, 'wrong-token.json');
    writeFileSync(wrongConfig, JSON.stringify(config), { mode: 0o600 });
    const result = await kubectl({ ...(cluster as Cluster), kubeconfig: wrongConfig }, 'get', 'pods', '-A');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Unauthorized|must be logged in/);
  });
});

describeWithKubectl('kubectl against every server version', () => {
  it.each(SERVER_VERSIONS)('Kubernetes %s: /version, discovery and a paged get work', async (serverVersion) => {
    const cluster = await startCluster({ serverVersion });
    try {
      createChurn(cluster.server.store, { seed: 5, namespaces: 1, pods: 3 }).populate();
      const result = await kubectl(cluster, 'get', 'pods', '-n', 'ns-0', '--chunk-size=2');
      expect([result.code, result.stderr]).toEqual([0, '']);
      expect(rows(result.stdout).map((row) => row[0])).toEqual(podNames(cluster.server, 'ns-0'));
      expect(cluster.server.requests.entries.some((request) => request.path === '/version')).toBe(true);
    } finally {
      await stopCluster(cluster);
    }
  });
});
