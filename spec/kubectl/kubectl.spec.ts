import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { deployments, pods, type Deployment } from '../../lib/resources/builtins';
import { createChurn, makePod, seededRandom } from '../../lib/testing/churn';
import { widgets, type Widget } from '../../lib/testing/builtinResources';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../lib/testing/server';
import { SERVER_VERSIONS } from '../../lib/testing/serverVersion';

/**
 * The real kubectl against the loopback API server: discovery, get (one namespace, all, chunked,
 * by label, built-in, apps/v1 and custom resources), get -w, create -f and delete. Every command
 * gets a fresh --cache-dir so discovery is really asked of the server each time.
 */

function onPath(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

const kubectlPath = onPath('kubectl');
if (kubectlPath === undefined) console.warn('kubectl not found on PATH: kubectl suite not run');
/** Without kubectl every test is reported as skipped (never as passed), after the warning above. */
const describeWithKubectl = kubectlPath === undefined ? describe.skip : describe;

interface Result {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface Cluster {
  readonly server: ApiServer;
  readonly dir: string;
  readonly kubeconfig: string;
}

async function startCluster(options: ApiServerOptions): Promise<Cluster> {
  const server = await startApiServer(options);
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-kubectl-'));
  const kubeconfig = join(dir, 'kubeconfig.json');
  writeFileSync(kubeconfig, server.kubeConfig.exportConfig(), { mode: 0o600 });
  return { server, dir, kubeconfig };
}

async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  if (cluster === undefined) return;
  await cluster.server.close();
  rmSync(cluster.dir, { recursive: true, force: true });
}

function spawnKubectl(cluster: Cluster, args: readonly string[]): ChildProcessWithoutNullStreams {
  const cacheDir = mkdtempSync(join(cluster.dir, 'cache-'));
  return spawn(kubectlPath ?? 'kubectl', ['--kubeconfig', cluster.kubeconfig, '--cache-dir', cacheDir, ...args], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig },
  });
}

function kubectl(cluster: Cluster, ...args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawnKubectl(cluster, args);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The first column of every row under the header (NAME, or NAMESPACE with -A). */
function rows(output: string): string[][] {
  return output
    .trim()
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/\s+/));
}

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

  it('get pods -n NS discovers the API and lists exactly that namespace', async () => {
    server.requests.clear();
    const result = await run('get', 'pods', '-n', 'ns-0');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^NAME\s+AGE/);
    expect(rows(result.stdout).map((row) => row[0]).sort()).toEqual(podNames(server, 'ns-0'));
    // A fresh cache dir means real discovery against the server, then one namespaced list.
    const verbs = server.requests.entries.map((entry) => entry.verb);
    expect(verbs).toContain('discovery');
    expect(server.requests.entries.filter((e) => e.verb === 'list')).toEqual([expect.objectContaining({ resource: 'pods', namespace: 'ns-0', status: 200 })]);
  });

  it('get pods -A lists every namespace, with a NAMESPACE column', async () => {
    const result = await run('get', 'pods', '-A');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+AGE/);
    const listed = rows(result.stdout);
    expect(listed.map((row) => `${row[0]}/${row[1]}`).sort()).toEqual(server.store.list(pods).map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`).sort());
    expect(new Set(listed.map((row) => row[0]))).toEqual(new Set(['ns-0', 'ns-1']));
  });

  it('get po (short name) and get namespaces work', async () => {
    const short = await run('get', 'po', '-n', 'ns-1');
    expect(short.code).toBe(0);
    expect(rows(short.stdout).map((row) => row[0]).sort()).toEqual(podNames(server, 'ns-1'));
    const result = await run('get', 'namespaces');
    expect(result.code).toBe(0);
    expect(rows(result.stdout).map((row) => row[0])).toEqual(expect.arrayContaining(['ns-0', 'ns-1']));
  });

  it('get deployments (apps/v1) and get widgets (a custom resource) list what the store holds', async () => {
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
    expect(rows(listedDeployments.stdout).map((row) => row[0])).toEqual(['shop-api']);
    const listedWidgets = await run('get', 'widgets', '-n', 'ns-1');
    expect(listedWidgets.code).toBe(0);
    expect(rows(listedWidgets.stdout).map((row) => row[0])).toEqual(['blue-widget']);
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
    let waiting: { text: string; resolve: () => void } | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (waiting !== undefined && stdout.includes(waiting.text)) waiting.resolve();
    });
    const seen = (text: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const giveUp = setTimeout(() => reject(new Error(`kubectl -w never printed ${text}; printed:\n${stdout}`)), 20_000);
        waiting = {
          text,
          resolve: () => {
            clearTimeout(giveUp);
            resolve();
          },
        };
        if (stdout.includes(text)) waiting.resolve();
      });
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      const existing = podNames(server, 'ns-1');
      await seen(existing[existing.length - 1] as string);
      expect(stdout.split('\n')[0]).toMatch(/^NAME\s+AGE/);
      // The watch starts after the list; requests show it, then the store change reaches kubectl.
      await waitForWatch(server);
      server.store.create(pods, makePod(seededRandom(8), 'ns-1', 'watched-new-pod'));
      await seen('watched-new-pod');
      server.store.delete(pods, 'ns-1', existing[0] as string);
      const linesBefore = stdout.split('\n').filter((line) => line.startsWith(`${existing[0] as string} `)).length;
      await new Promise<void>((resolve, reject) => {
        const giveUp = setTimeout(() => reject(new Error(`no line for the deleted pod; printed:\n${stdout}`)), 20_000);
        const check = (): void => {
          if (stdout.split('\n').filter((line) => line.startsWith(`${existing[0] as string} `)).length > linesBefore) {
            clearTimeout(giveUp);
            child.stdout.off('data', check);
            resolve();
          }
        };
        child.stdout.on('data', check);
      });
    } finally {
      child.kill('SIGTERM');
      await closed;
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

/** Resolves once the server has received kubectl's watch request. */
function waitForWatch(server: ApiServer): Promise<void> {
  return new Promise((resolve, reject) => {
    const giveUp = setTimeout(() => {
      clearInterval(poll);
      reject(new Error('kubectl never opened its watch'));
    }, 20_000);
    const poll = setInterval(() => {
      if (server.requests.entries.some((entry) => entry.verb === 'watch' && entry.resource === 'pods')) {
        clearInterval(poll);
        clearTimeout(giveUp);
        resolve();
      }
    }, 20);
  });
}

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
