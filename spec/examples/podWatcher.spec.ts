import { stderrWhile } from '../support/stderr';
import { pods, type Pod } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { main } from '../../examples/podWatcher';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

const pod = (namespace: string, name: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name } });

describeEachServerVersion('example: the pod watcher, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(() => server.close());

  it('reports the synced cache per namespace, then exactly the changes that follow, and returns after the asked number', async () => {
    server.store.create(pods, pod('a', 'one'));
    server.store.create(pods, pod('a', 'two'));
    server.store.create(pods, pod('b', 'three'));
    const listedAt = server.store.resourceVersion;
    const lines = new Lines();
    const watching = main(server.kubeConfig, { changes: 3, log: lines.log });
    await lines.waitFor(/^synced: /);

    server.store.create(pods, pod('b', 'four'));
    const two = server.store.get(pods, 'a', 'two')!;
    server.store.update(pods, { ...two, metadata: { ...two.metadata, labels: { touched: 'yes' } } });
    server.store.delete(pods, 'a', 'one');
    const result = await lines.settled(watching, 'main() to return after 3 changes');

    expect(result).toEqual({ synced: 3, changes: ['add b/four', 'update a/two', 'delete a/one'] });
    expect(lines.seen).toEqual([
      'health: idle',
      'health: listing',
      'health: watching',
      `synced: 3 pods in 2 namespaces at resourceVersion ${listedAt}`,
      '  a: 2',
      '  b: 1',
      'add b/four',
      'update a/two',
      'delete a/one',
    ]);
  });

  it('watches one namespace when asked', async () => {
    server.store.create(pods, pod('a', 'one'));
    server.store.create(pods, pod('b', 'two'));
    const lines = new Lines();
    const watching = main(server.kubeConfig, { namespace: 'b', changes: 1, log: lines.log });
    await lines.waitFor(/^synced: /);
    server.store.create(pods, pod('a', 'ignored'));
    server.store.create(pods, pod('b', 'seen'));
    expect(await lines.settled(watching, 'main() to return after 1 change')).toEqual({ synced: 1, changes: ['add b/seen'] });
  });

  it('gives up with the 403 when RBAC forbids listing pods, instead of waiting for ever', async () => {
    await server.close();
    // A streaming list is a watch: forbid both, as RBAC without read access does.
    server = await startApiServer({ serverVersion, deny: [{ verb: 'list', resource: 'pods' }, { verb: 'watch', resource: 'pods' }] });
    const lines = new Lines();
    const stderr = await stderrWhile(() => expect(main(server.kubeConfig, { syncTimeout: 300, log: lines.log })).rejects.toMatchObject({ name: 'StatusError', code: 403 }));
    expect(lines.seen.some((line) => line.startsWith('health: backingOff'))).toBe(true);
    // The example passes no logger: the 403 is on stderr all the same, as an error.
    expect(stderr.some((line) => / ERROR .*403 Forbidden/.test(line))).toBe(true);
  });
});
