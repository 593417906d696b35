import { deployments, eventsV1, pods } from '../../lib/resources/builtins';
import type { ApiServer } from '../../apiserver/src/server';
import { describeWithKubectl, kubectl, manifestFile, printed, startKubectlCluster, type Result } from './kubectlRunner';
import { stopCluster, type Cluster } from './realClients';

/**
 * The real kubectl reading and writing what controllers write back: `apply --server-side` (create,
 * re-apply, a second field manager's conflict and `--force-conflicts`), the managed fields it
 * shows, `patch --subresource=status`, and Events through `get events` and `describe`. Applies run
 * with `--validate=false`: the loopback server serves no OpenAPI for kubectl's client-side schema check.
 */

describeWithKubectl('kubectl write-back against the loopback API server', () => {
  let cluster: Cluster | undefined;
  let server: ApiServer;

  beforeAll(async () => {
    cluster = await startKubectlCluster({});
    server = cluster.server;
  });
  afterAll(() => stopCluster(cluster));

  const run = (...args: string[]): Promise<Result> => kubectl(cluster!, args);
  const file = (name: string, object: object): string => manifestFile(cluster!, name, object);
  const deployment = (name: string, replicas: number, image: string): object => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } } },
  });

  it('apply --server-side creates, re-applies, refuses a second field manager with its conflict message, and --force-conflicts takes the field', async () => {
    const path = file('ssa.json', deployment('ssa', 2, 'app:1'));
    const created = await run('apply', '--server-side', '--validate=false', '-f', path);
    expect([created.code, created.stdout.trim(), created.stderr]).toEqual([0, 'deployment.apps/ssa serverside-applied', '']);
    const stored = server.store.get(deployments, 'default', 'ssa')!;
    expect(stored.spec?.replicas).toBe(2);
    expect(stored.metadata.managedFields?.map((e) => [e.manager, e.operation])).toEqual([['kubectl', 'Apply']]);

    const again = await run('apply', '--server-side', '--validate=false', '-f', path);
    expect([again.code, again.stdout.trim()]).toEqual([0, 'deployment.apps/ssa serverside-applied']);
    expect(server.store.get(deployments, 'default', 'ssa')?.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);

    const scaled = file('ssa-scaled.json', deployment('ssa', 5, 'app:1'));
    const refused = await run('apply', '--server-side', '--validate=false', '--field-manager=autoscaler', '-f', scaled);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas');
    expect(refused.stderr).toContain('Please review the fields above--they currently have other managers.');
    expect(refused.stderr).toContain('--force-conflicts');
    expect(server.store.get(deployments, 'default', 'ssa')?.spec?.replicas).toBe(2);

    const forced = await run('apply', '--server-side', '--validate=false', '--field-manager=autoscaler', '--force-conflicts', '-f', scaled);
    expect([forced.code, forced.stdout.trim()]).toEqual([0, 'deployment.apps/ssa serverside-applied']);
    expect(server.store.get(deployments, 'default', 'ssa')?.spec?.replicas).toBe(5);
  });

  it('get -o yaml --show-managed-fields shows each manager, its operation and its fieldsV1; without the flag they are hidden', async () => {
    await run('apply', '--server-side', '--validate=false', '-f', file('shown.json', deployment('shown', 1, 'app:1')));
    await run('apply', '--server-side', '--validate=false', '--field-manager=scaler', '-f', file('shown-scaler.json', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shown', namespace: 'default' }, spec: { replicas: 1 } }));
    const shown = await run('get', 'deployment', 'shown', '-o', 'yaml', '--show-managed-fields');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/managedFields:\n {2}- apiVersion: apps\/v1\n {4}fieldsType: FieldsV1\n {4}fieldsV1:\n/);
    expect(shown.stdout).toContain('manager: kubectl\n    operation: Apply');
    expect(shown.stdout).toContain('manager: scaler\n    operation: Apply');
    expect(shown.stdout).toContain('k:{"name":"app"}:');
    expect(shown.stdout).toContain('f:replicas: {}');
    const hidden = await run('get', 'deployment', 'shown', '-o', 'yaml');
    expect(hidden.stdout).not.toContain('managedFields');
  });

  it('apply --server-side over a client-side apply takes kubectl\'s fields over without a conflict', async () => {
    const path = file('csa.json', deployment('csa', 1, 'app:1'));
    expect((await run('apply', '-f', path, '--validate=false')).code).toBe(0);
    const upgraded = await run('apply', '--server-side', '--validate=false', '-f', file('csa-2.json', deployment('csa', 3, 'app:2')));
    expect([upgraded.code, upgraded.stdout.trim(), upgraded.stderr]).toEqual([0, 'deployment.apps/csa serverside-applied', '']);
    const stored = server.store.get(deployments, 'default', 'csa')!;
    expect([stored.spec?.replicas, stored.spec?.template?.spec?.containers?.[0]?.image]).toEqual([3, 'app:2']);
    expect(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('"image":"app:2"');
  });

  it('patch --subresource=status changes the status and not the spec', async () => {
    server.store.create(pods, { metadata: { name: 'reported', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'c:1' }] }, status: { phase: 'Pending' } });
    const patched = await run('patch', 'pod', 'reported', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"},"spec":{"nodeName":"ignored"}}');
    expect([patched.code, patched.stdout.trim(), patched.stderr]).toEqual([0, 'pod/reported patched', '']);
    const stored = server.store.get(pods, 'default', 'reported')!;
    expect([stored.status?.phase, stored.spec?.nodeName]).toEqual(['Running', undefined]);
    const main = await run('patch', 'pod', 'reported', '--type=merge', '-p', '{"status":{"phase":"Failed"}}');
    expect(main.code).toBe(0);
    expect(server.store.get(pods, 'default', 'reported')?.status?.phase).toBe('Running');
  });

  describe('Events an events.k8s.io recorder wrote', () => {
    // Ages of ten minutes and more print in whole minutes: a slow run does not change them.
    const eventTime = (agoMinutes: number): string => new Date(Date.now() - agoMinutes * 60_000).toISOString().replace('Z', '000Z');

    beforeAll(() => {
      const pod = server.store.create(pods, { metadata: { name: 'described', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'c:1' }] }, status: { phase: 'Running' } });
      const about = { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'described', uid: pod.metadata.uid };
      server.store.create(eventsV1, {
        metadata: { name: 'described.started', namespace: 'default' },
        eventTime: eventTime(20),
        reportingController: 'example.com/widget-controller',
        reportingInstance: 'widget-controller-0',
        action: 'Reconcile',
        reason: 'Started',
        regarding: about,
        note: 'started the pod',
        type: 'Normal',
      });
      server.store.create(eventsV1, {
        metadata: { name: 'described.backoff', namespace: 'default' },
        eventTime: eventTime(40),
        series: { count: 4, lastObservedTime: eventTime(15) },
        reportingController: 'example.com/widget-controller',
        reportingInstance: 'widget-controller-0',
        action: 'Reconcile',
        reason: 'BackOff',
        regarding: about,
        note: 'backing off',
        type: 'Warning',
      });
      // About another pod: describe must not list it.
      server.store.create(eventsV1, {
        metadata: { name: 'other.started', namespace: 'default' },
        eventTime: eventTime(25),
        reportingController: 'example.com/widget-controller',
        reportingInstance: 'widget-controller-0',
        action: 'Reconcile',
        reason: 'Started',
        regarding: { ...about, name: 'other', uid: 'uid-other' },
        note: 'started the other pod',
        type: 'Normal',
      });
    });

    it('get events prints them with the server\'s columns', async () => {
      const listed = await run('get', 'events', '-n', 'default');
      expect([listed.code, listed.stderr]).toEqual([0, '']);
      const table = printed(listed.stdout);
      expect(table.columns).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      expect(table.rows).toEqual(
        expect.arrayContaining([
          { 'LAST SEEN': '15m', TYPE: 'Warning', REASON: 'BackOff', OBJECT: 'pod/described', MESSAGE: 'backing off' },
          { 'LAST SEEN': '20m', TYPE: 'Normal', REASON: 'Started', OBJECT: 'pod/described', MESSAGE: 'started the pod' },
          { 'LAST SEEN': '25m', TYPE: 'Normal', REASON: 'Started', OBJECT: 'pod/other', MESSAGE: 'started the other pod' },
        ]),
      );
      const wide = printed((await run('get', 'events', '-n', 'default', '-o', 'wide')).stdout);
      expect(wide.columns).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
      expect(wide.rows.find((row) => row['NAME'] === 'described.backoff')).toMatchObject({ SOURCE: 'example.com/widget-controller, widget-controller-0', COUNT: '4', 'FIRST SEEN': '40m' });
    });

    it('describe pod lists the events about that pod (found by involvedObject field selectors)', async () => {
      server.requests.clear();
      const described = await run('describe', 'pod', 'described', '-n', 'default');
      expect([described.code, described.stderr]).toEqual([0, '']);
      const section = described.stdout.slice(described.stdout.indexOf('Events:'));
      expect(section).toMatch(/Type\s+Reason\s+Age\s+From\s+Message/);
      expect(section).toMatch(/Warning\s+BackOff\s+15m \(x4 over 40m\)\s+example\.com\/widget-controller\s+backing off/);
      expect(section).toMatch(/Normal\s+Started\s+20m\s+example\.com\/widget-controller\s+started the pod/);
      expect(section).not.toContain('started the other pod');
      const search = server.requests.entries.find((entry) => entry.resource === 'events' && entry.verb === 'list');
      expect(search?.query['fieldSelector']).toContain('involvedObject.name=described');
    });
  });
});
