import { join } from 'node:path';
import { pods } from '../../lib/resources/builtins';
import { createChurn, makePod, seededRandom } from '../../apiserver/src/churn';
import { NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION } from '../../apiserver/src/serverVersion';
import { findPythonClient, runProgram, startCluster, stopCluster, waitForWatch, type Cluster, type ProgramResult } from './realClients';

/**
 * The Python Kubernetes client (Debian's `python3-kubernetes`, or `pip install kubernetes`) against
 * the loopback API server: it lists and watches generated pods through its typed models, which
 * refuse an object lacking any field the API's OpenAPI requires, and its `watch.Watch().stream`
 * sends `watch=True`. Against the oldest and the newest server version modelled.
 */

const client = findPythonClient();
if ('missing' in client) console.warn(`${client.missing}: Python client suite not run`);
/** Without the client every test is reported as skipped (never as passed), after the warning above. */
const describeWithPython = 'missing' in client ? describe.skip : describe;
const SCRIPT = join(__dirname, 'python', 'listAndWatch.py');

/** Runs the script to its end; `onLine` sees each stdout line as it comes. */
function runPython(cluster: Cluster, args: readonly string[], onLine?: (line: string) => void): Promise<ProgramResult> {
  if ('missing' in client) throw new Error(client.missing);
  return runProgram(client.python, [SCRIPT, cluster.kubeconfig, ...args], { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, ...(onLine === undefined ? {} : { onLine }) });
}

interface Listed {
  readonly resourceVersion: string;
  readonly model: string;
  readonly pods: readonly { model: string; namespace: string; name: string; phase: string; images: string[]; imageIDs: string[] }[];
  readonly namespaces: readonly { model: string; name: string; phase: string }[];
}

interface WatchedEvent {
  readonly type: string;
  readonly model: string;
  readonly name: string | null;
  readonly resourceVersion: string;
}

describeWithPython.each([OLDEST_SERVER_VERSION, NEWEST_SERVER_VERSION])('the Python client against Kubernetes %s', (serverVersion) => {
  let cluster: Cluster | undefined;

  beforeAll(async () => {
    cluster = await startCluster({ serverVersion, bookmarkIntervalMs: 200 }, 'rx-informer-python-');
    createChurn(cluster.server.store, { seed: 9, namespaces: 3, pods: 30 }).populate();
  });
  afterAll(() => stopCluster(cluster));

  it('lists generated pods and namespaces into its typed models (V1PodList, V1Pod, V1Namespace)', async () => {
    const { server } = cluster!;
    const run = await runPython(cluster!, ['list']);
    expect([run.code, run.stderr]).toEqual([0, '']);
    const listed = JSON.parse(run.stdout) as Listed;
    expect(listed.model).toBe('V1PodList');
    expect(listed.resourceVersion).toBe(server.store.resourceVersion);
    const stored = server.store.list(pods);
    expect(listed.pods.map((pod) => `${pod.namespace}/${pod.name}`)).toEqual(stored.map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`));
    expect(new Set(listed.pods.map((pod) => pod.model))).toEqual(new Set(['V1Pod']));
    for (const [i, pod] of listed.pods.entries()) {
      expect(pod.images).toEqual([stored[i]!.spec?.containers?.[0]?.image]);
      expect(pod.imageIDs[0]).toMatch(/@sha256:[0-9a-f]{64}$/);
    }
    expect(listed.namespaces.map((ns) => ns.name)).toEqual(expect.arrayContaining(['default', 'ns-0', 'ns-1', 'ns-2']));
    expect(new Set(listed.namespaces.map((ns) => `${ns.model} ${ns.phase}`))).toEqual(new Set(['V1Namespace Active']));
  });

  it('watches with watch.Watch().stream (watch=True) and bookmarks: each change as a V1Pod, bookmarks raw', async () => {
    const { server } = cluster!;
    server.requests.clear();
    const from = server.store.resourceVersion;
    const seen: WatchedEvent[] = [];
    const running = runPython(cluster!, ['watch', 'ns-1', from, 'python-watched'], (line) => seen.push(JSON.parse(line) as WatchedEvent));
    await waitForWatch(server, 'pods');
    const created = server.store.create(pods, makePod(seededRandom(5), 'ns-1', 'python-watched', { app: 'web' }));
    server.store.update(pods, { ...created, metadata: { ...created.metadata, labels: { ...created.metadata.labels, stage: 'two' } } });
    server.store.delete(pods, 'ns-1', 'python-watched');
    const run = await running;
    expect([run.code, run.stderr]).toEqual([0, '']);

    const watch = server.requests.entries.find((entry) => entry.verb === 'watch');
    expect(watch?.query).toMatchObject({ watch: 'True', allowWatchBookmarks: 'True', resourceVersion: from, timeoutSeconds: '30' });
    const changes = seen.filter((event) => event.type !== 'BOOKMARK');
    expect(changes.map((event) => [event.type, event.name, event.model])).toEqual([
      ['ADDED', 'python-watched', 'V1Pod'],
      ['MODIFIED', 'python-watched', 'V1Pod'],
      ['DELETED', 'python-watched', 'V1Pod'],
    ]);
    const bookmarks = seen.filter((event) => event.type === 'BOOKMARK');
    expect(bookmarks.length).toBeGreaterThan(0);
    // The client leaves bookmarks undecoded (a dict), carrying only a resourceVersion.
    expect(bookmarks.every((event) => event.model === 'dict' && event.name === null && event.resourceVersion !== undefined)).toBe(true);
  });
});
