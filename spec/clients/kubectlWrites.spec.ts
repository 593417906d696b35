import { configMaps, deployments, pods } from '../../lib/resources/builtins';
import { widgets } from '../../apiserver/src/builtinResources';
import type { ApiServer } from '../../apiserver/src/server';
import { describeWithKubectl, kubectl, manifestFile, startKubectlCluster, type Result } from './kubectlRunner';
import { stopCluster, type Cluster } from './realClients';

/**
 * The real kubectl writing to the loopback API server: `patch` of every type, `set image`,
 * client-side `apply`, and what the loopback server refuses with a clear 415 (protobuf bodies from
 * `kubectl create configmap`) or refuses as the API server does (a strategic merge patch of a
 * custom resource). Server-side apply: kubectlApply.spec.ts.
 */

describeWithKubectl('kubectl writes against the loopback API server', () => {
  let cluster: Cluster | undefined;
  let server: ApiServer;

  beforeAll(async () => {
    cluster = await startKubectlCluster({});
    server = cluster.server;
  });
  afterAll(() => stopCluster(cluster));

  const run = (...args: string[]): Promise<Result> => kubectl(cluster!, args);
  const file = (name: string, object: object): string => manifestFile(cluster!, name, object);

  it('patch --type=json applies RFC 6902 operations, and a failing one is "The request is invalid", as against a real cluster', async () => {
    server.store.create(pods, { metadata: { name: 'patched', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'c:1' }] } });
    const patched = await run('patch', 'pod', 'patched', '--type=json', '-p', '[{"op":"replace","path":"/spec/containers/0/image","value":"c:2"},{"op":"add","path":"/metadata/labels/stage","value":"two"}]');
    expect([patched.code, patched.stdout.trim(), patched.stderr]).toEqual([0, 'pod/patched patched', '']);
    expect(server.store.get(pods, 'default', 'patched')).toMatchObject({ metadata: { labels: { app: 'web', stage: 'two' } }, spec: { containers: [{ name: 'c', image: 'c:2' }] } });
    const before = server.store.get(pods, 'default', 'patched');
    const failed = await run('patch', 'pod', 'patched', '--type=json', '-p', '[{"op":"remove","path":"/metadata/labels/absent"}]');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('The request is invalid: the server rejected our request due to an error in our request');
    expect(server.store.get(pods, 'default', 'patched')).toBe(before);
  });

  it('patch (strategic, the default), patch --type=merge and set image merge containers by name', async () => {
    server.store.create(deployments, {
      metadata: { name: 'shop', namespace: 'default' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'shop' } }, template: { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'proxy:1' }] } } },
    });
    expect((await run('set', 'image', 'deployment/shop', 'app=app:2')).code).toBe(0);
    expect((await run('patch', 'deployment', 'shop', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"proxy:2"}]}}}}')).code).toBe(0);
    expect((await run('patch', 'deployment', 'shop', '--type=merge', '-p', '{"spec":{"replicas":3}}')).code).toBe(0);
    const stored = server.store.get(deployments, 'default', 'shop')!;
    expect(stored.spec?.replicas).toBe(3);
    expect(stored.spec?.template?.spec).toEqual({ containers: [{ name: 'app', image: 'app:2' }, { name: 'proxy', image: 'proxy:2' }] });
  });

  it('patch of a custom resource: merge works, strategic (the default) is refused with the API server\'s 415', async () => {
    server.store.create(widgets, { metadata: { name: 'blue', namespace: 'default' }, spec: { size: 1 } });
    const strategic = await run('patch', 'widget', 'blue', '-p', '{"spec":{"size":2}}');
    expect(strategic.code).toBe(1);
    expect(strategic.stderr).toContain(
      'application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    expect((await run('patch', 'widget', 'blue', '--type=merge', '-p', '{"spec":{"size":2}}')).code).toBe(0);
    expect(server.store.get(widgets, 'default', 'blue')?.spec?.size).toBe(2);
  });

  it('create configmap (a protobuf body) gets a 415 that says how to send JSON, and the way it names works', async () => {
    const refused = await run('create', 'configmap', 'settings', '--from-literal=mode=fast');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error: failed to create configmap: the body of the request was in an unknown format - accepted media types include: application/json');
    expect(refused.stderr).toContain('the loopback API server reads JSON only, not application/vnd.kubernetes.protobuf');
    expect(refused.stderr).toContain('kubectl create configmap NAME --from-literal=KEY=VALUE --dry-run=client -o json | kubectl create -f - --validate=false');
    expect(server.store.get(configMaps, 'default', 'settings')).toBeUndefined();

    const generated = await run('create', 'configmap', 'settings', '--from-literal=mode=fast', '--dry-run=client', '-o', 'json');
    expect(generated.code).toBe(0);
    const created = await kubectl(cluster!, ['create', '-f', '-', '--validate=false'], generated.stdout);
    expect([created.code, created.stdout.trim()]).toEqual([0, 'configmap/settings created']);
    expect(server.store.get(configMaps, 'default', 'settings')?.data).toEqual({ mode: 'fast' });
  });

  it('apply (client-side) creates, then patches with a strategic merge of its last-applied configuration', async () => {
    const deployment = (image: string, replicas: number): object => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'applied', namespace: 'default' },
      spec: { replicas, selector: { matchLabels: { app: 'applied' } }, template: { metadata: { labels: { app: 'applied' } }, spec: { containers: [{ name: 'app', image }] } } },
    });
    const first = await run('apply', '-f', file('applied-1.json', deployment('app:1', 1)), '--validate=false');
    expect([first.code, first.stdout.trim()]).toEqual([0, 'deployment.apps/applied created']);
    const secondFile = file('applied-2.json', deployment('app:2', 2));
    const second = await run('apply', '-f', secondFile, '--validate=false');
    expect([second.code, second.stdout.trim()]).toEqual([0, 'deployment.apps/applied configured']);
    const stored = server.store.get(deployments, 'default', 'applied')!;
    expect([stored.spec?.replicas, stored.spec?.template?.spec]).toEqual([2, { containers: [{ name: 'app', image: 'app:2' }] }]);
    expect(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('"image":"app:2"');
    const again = await run('apply', '-f', secondFile, '--validate=false');
    expect([again.code, again.stdout.trim()]).toEqual([0, 'deployment.apps/applied unchanged']);
  });
});
