import type { Subscription } from 'rxjs';
import { configMaps, eventsV1 } from '../../lib/resources/builtins';
import { eventRecorder } from '../../lib/writes/eventRecorder';
import { widgets } from '../../apiserver/src/builtinResources';
import type { ApiServer } from '../../apiserver/src/server';
import { eventually } from '../support/eventually';
import { MANAGER, runWidgetController } from '../e2e/widgetController';
import { describeWithKubectl, kubectl, manifestFile, printed, startKubectlCluster, type Result } from './kubectlRunner';
import { stopCluster, type Cluster } from './realClients';

/**
 * kubectl reads what a controller wrote back (issue 33): the controller of spec/e2e/writeBack.spec.ts
 * runs against the loopback server, then kubectl lists and describes its Event, shows the managed
 * fields of the child it applied, meets the controller as the owner of a field in a conflicting
 * `apply --server-side` and takes it with `--force-conflicts`, and reads the Ready condition.
 * Applies run with `--validate=false`: the loopback server serves no OpenAPI for kubectl's
 * client-side schema check.
 */

describeWithKubectl('kubectl reads what rx-informer/writes wrote', () => {
  let cluster: Cluster | undefined;
  let server: ApiServer;
  let controller: Subscription | undefined;

  beforeAll(async () => {
    cluster = await startKubectlCluster({});
    server = cluster.server;
    server.store.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop' }, spec: { size: 3 } });
    controller = runWidgetController(server.kubeConfig, eventRecorder(server.kubeConfig, { reportingController: MANAGER, reportingInstance: 'replica-1' }));
    await eventually(() => expect(server.store.list(eventsV1, 'shop')).toHaveLength(1));
  });
  afterAll(async () => {
    controller?.unsubscribe();
    await stopCluster(cluster);
  });

  const run = (...args: string[]): Promise<Result> => kubectl(cluster!, args);

  it('get events lists the Event with its reason, object and source', async () => {
    const result = await run('get', 'events', '-n', 'shop');
    expect([result.code, result.stderr]).toEqual([0, '']);
    const table = printed(result.stdout);
    expect(table.rows).toEqual([expect.objectContaining({ TYPE: 'Normal', REASON: 'SettingsApplied', OBJECT: 'widget/w' })]);
  });

  it('describe shows the Event under the Widget, from the reporting controller', async () => {
    const result = await run('describe', 'widgets', 'w', '-n', 'shop');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Events:\s*\n\s*Type\s+Reason\s+Age\s+From\s+Message/);
    expect(result.stdout).toMatch(new RegExp(`Normal\\s+SettingsApplied\\s+\\S+\\s+${MANAGER.replace(/[./]/g, '\\$&')}\\s+settings applied for size 3`));
  });

  it("shows the child's managedFields, owned by the controller's manager", async () => {
    const result = await run('get', 'configmap', 'w-settings', '-n', 'shop', '--show-managed-fields', '-o', 'json');
    expect(result.code).toBe(0);
    const managed = (JSON.parse(result.stdout) as { metadata: { managedFields: { manager: string; operation: string }[] } }).metadata.managedFields;
    expect(managed).toEqual([expect.objectContaining({ manager: MANAGER, operation: 'Apply' })]);
  });

  it('apply --server-side by another manager conflicts on the field, naming the controller; --force-conflicts takes it', async () => {
    const path = manifestFile(cluster!, 'settings.json', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-settings', namespace: 'shop' }, data: { size: '99' } });
    const refused = await run('apply', '--server-side', '--validate=false', '--field-manager=other-team', '-f', path);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`conflict with "${MANAGER}"`);
    expect(refused.stderr).toContain('.data.size');
    expect(server.store.get(configMaps, 'shop', 'w-settings')?.data).toEqual({ size: '3' });
    const forced = await run('apply', '--server-side', '--validate=false', '--field-manager=other-team', '--force-conflicts', '-f', path);
    expect([forced.code, forced.stdout.trim()]).toEqual([0, 'configmap/w-settings serverside-applied']);
    expect(server.store.get(configMaps, 'shop', 'w-settings')?.data).toEqual({ size: '99' });
  });

  it('get widgets -o json shows the Ready condition the controller set through the status subresource', async () => {
    const result = await run('get', 'widgets', 'w', '-n', 'shop', '-o', 'json');
    const widget = JSON.parse(result.stdout) as { metadata: { generation: number }; status?: { conditions?: { type: string; status: string; observedGeneration?: number }[] } };
    expect(widget.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', observedGeneration: widget.metadata.generation })]);
  });
});
