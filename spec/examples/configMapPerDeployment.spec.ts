import { silentLogger } from '../../lib/base/logger';
import { configMaps, deployments, type ConfigMap, type Deployment } from '../../lib/resources/builtins';
import { StatusError } from '../../lib/base/errors';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { infoName, main } from '../../examples/configMapPerDeployment';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

const NS = 'shop';

function deployment(name: string, replicas: number, image: string): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { namespace: NS, name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image }] } },
    },
  };
}

function infoOf(server: ApiServer, name: string): ConfigMap | undefined {
  return server.store.get(configMaps, NS, infoName(name));
}

describeEachServerVersion('example: a ConfigMap per Deployment, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  let lines: Lines;
  let stop: AbortController;
  let running: Promise<void> | undefined;

  const start = async (): Promise<void> => {
    running = main(server.kubeConfig, { namespace: NS, signal: stop.signal, log: lines.log, resyncPeriod: 60_000, logger: silentLogger });
    await lines.waitFor('caches synced');
  };

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, tls: true });
    lines = new Lines();
    stop = new AbortController();
    running = undefined;
  });
  afterEach(async () => {
    stop.abort();
    if (running !== undefined) await lines.settled(running.catch(() => undefined), 'main() to settle once aborted');
    await server.close();
  });

  it('creates <name>-info with replicas and image, owned by the Deployment, for existing and new Deployments', async () => {
    const web = server.store.create(deployments, deployment('web', 3, 'nginx:1.27'));
    await start();
    await lines.waitFor(`created web-info for ${NS}/web`);
    const api = server.store.create(deployments, deployment('api', 2, 'example/api:7'));
    await lines.waitFor(`created api-info for ${NS}/api`);

    expect(infoOf(server, 'web')?.data).toEqual({ replicas: '3', image: 'nginx:1.27' });
    expect(infoOf(server, 'api')?.data).toEqual({ replicas: '2', image: 'example/api:7' });
    expect(infoOf(server, 'web')?.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: web.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(infoOf(server, 'api')?.metadata.ownerReferences?.[0]?.uid).toBe(api.metadata.uid);
  });

  it('updates the ConfigMap when the Deployment scales or changes image', async () => {
    server.store.create(deployments, deployment('web', 3, 'nginx:1.27'));
    await start();
    await lines.waitFor(`created web-info for ${NS}/web`);

    const mark = lines.mark();
    const current = server.store.get(deployments, NS, 'web')!;
    server.store.update(deployments, { ...deployment('web', 5, 'nginx:1.28'), metadata: current.metadata });
    await lines.waitFor(`updated web-info for ${NS}/web`, mark);
    expect(infoOf(server, 'web')?.data).toEqual({ replicas: '5', image: 'nginx:1.28' });
  });

  it('deletes the ConfigMap when its Deployment is deleted', async () => {
    server.store.create(deployments, deployment('web', 1, 'nginx:1.27'));
    server.store.create(deployments, deployment('api', 1, 'example/api:7'));
    await start();
    await lines.waitFor(`created web-info for ${NS}/web`);
    await lines.waitFor(`created api-info for ${NS}/api`);

    const mark = lines.mark();
    server.store.delete(deployments, NS, 'web');
    await lines.waitFor(`deleted web-info for ${NS}/web`, mark);
    expect(infoOf(server, 'web')).toBeUndefined();
    expect(infoOf(server, 'api')).toBeDefined();
    expect(infoOf(server, 'api')?.data).toEqual({ replicas: '1', image: 'example/api:7' });
  });

  it('puts back a ConfigMap that someone else edited or deleted', async () => {
    server.store.create(deployments, deployment('web', 3, 'nginx:1.27'));
    await start();
    await lines.waitFor(`created web-info for ${NS}/web`);

    let mark = lines.mark();
    const edited = infoOf(server, 'web')!;
    server.store.update(configMaps, { ...edited, data: { replicas: '99', note: 'hand-edited' } });
    await lines.waitFor(`updated web-info for ${NS}/web`, mark);
    expect(infoOf(server, 'web')?.data).toEqual({ replicas: '3', image: 'nginx:1.27' });

    mark = lines.mark();
    server.store.delete(configMaps, NS, infoName('web'));
    await lines.waitFor(`created web-info for ${NS}/web`, mark);
    expect(infoOf(server, 'web')?.data).toEqual({ replicas: '3', image: 'nginx:1.27' });
  });

  it('removes a ConfigMap left behind by a Deployment deleted while the controller was down', async () => {
    const gone = server.store.create(deployments, deployment('gone', 1, 'nginx:1.27'));
    server.store.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        namespace: NS,
        name: infoName('gone'),
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gone', uid: gone.metadata.uid ?? '', controller: true }],
      },
      data: { replicas: '1', image: 'nginx:1.27' },
    });
    server.store.delete(deployments, NS, 'gone');
    server.store.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: NS, name: 'unrelated' }, data: { keep: 'me' } });

    await start();
    await lines.waitFor(`deleted gone-info for ${NS}/gone`);
    expect(infoOf(server, 'gone')).toBeUndefined();
    expect(server.store.get(configMaps, NS, 'unrelated')?.data).toEqual({ keep: 'me' });
  });

  it('resolves once stopped, and rejects with the 403 when RBAC forbids listing Deployments', async () => {
    await start();
    stop.abort();
    await expect(lines.settled(running!, 'main() to resolve once stopped')).resolves.toBeUndefined();
    expect(lines.seen).toContain('stopped');

    await server.close();
    // A streaming list is a watch: forbid both, as RBAC without read access does.
    server = await startApiServer({ serverVersion, tls: true, deny: [{ verb: 'list', resource: 'deployments' }, { verb: 'watch', resource: 'deployments' }] });
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (fields: Record<string, unknown>, message: string) => void errors.push(`${message}: ${String(fields.err)}`) };
    const denied = main(server.kubeConfig, { namespace: NS, log: lines.log, syncTimeout: 300, logger });
    await expect(denied).rejects.toBeInstanceOf(StatusError);
    await expect(denied).rejects.toMatchObject({ code: 403 });
    // The example hands its logger to its informers: the 403 is logged as an error.
    expect(errors.some((line) => /403 Forbidden/.test(line))).toBe(true);
  });
});
