import { pods, type Pod } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { main } from '../../examples/podOwners';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

const owned = (name: string, owner: string | undefined): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    namespace: 'a',
    name,
    ...(owner === undefined ? {} : { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: owner, uid: `uid-${owner}`, controller: true }] }),
  },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

describeEachServerVersion('example: pods per owner from a metadata-only informer, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(() => server.close());

  it('counts pods per controlling owner once synced, then reports changes with their owner', async () => {
    server.store.create(pods, owned('web-1', 'web-rs'));
    server.store.create(pods, owned('web-2', 'web-rs'));
    server.store.create(pods, owned('db-1', 'db-rs'));
    server.store.create(pods, owned('loner', undefined));
    const lines = new Lines();
    const running = main(server.kubeConfig, { changes: 2, log: lines.log });
    await lines.waitFor(/^synced: /);

    server.store.create(pods, owned('web-3', 'web-rs'));
    server.store.delete(pods, 'a', 'db-1');
    const result = await lines.settled(running, 'main() to return after 2 changes');

    expect(result).toEqual({
      owners: { 'ReplicaSet/web-rs': 2, 'ReplicaSet/db-rs': 1, '(none)': 1 },
      changes: ['add a/web-3 (ReplicaSet/web-rs)', 'delete a/db-1 (ReplicaSet/db-rs)'],
    });
    expect(lines.seen).toEqual([
      'synced: 4 pods, 2 owners',
      '  (none): 1',
      '  ReplicaSet/db-rs: 1',
      '  ReplicaSet/web-rs: 2',
      'add a/web-3 (ReplicaSet/web-rs)',
      'delete a/db-1 (ReplicaSet/db-rs)',
    ]);
  });
});
