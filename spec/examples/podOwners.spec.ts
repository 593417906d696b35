import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { main } from '../../examples/podOwners';
import { Lines } from './lines';
import { createOwnedPods, ownedPod, SYNCED_OWNER_LINES } from './podOwnersFixtures';
import { describeEachServerVersion } from '../support/serverVersions';

describeEachServerVersion('example: pods per owner from a metadata-only informer, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
  });
  afterEach(() => server.close());

  it('counts pods per controlling owner once synced, then reports changes with their owner', async () => {
    createOwnedPods(server.store);
    const lines = new Lines();
    const running = main(server.kubeConfig, { changes: 2, log: lines.log });
    await lines.waitFor(/^synced: /);

    server.store.create(pods, ownedPod('a', 'web-3', 'web-rs'));
    server.store.delete(pods, 'a', 'db-1');
    const result = await lines.settled(running, 'main() to return after 2 changes');

    expect(result).toEqual({
      owners: { 'ReplicaSet/web-rs': 2, 'ReplicaSet/db-rs': 1, '(none)': 1 },
      changes: ['add a/web-3 (ReplicaSet/web-rs)', 'delete a/db-1 (ReplicaSet/db-rs)'],
    });
    expect(lines.seen).toEqual([
      ...SYNCED_OWNER_LINES,
      'add a/web-3 (ReplicaSet/web-rs)',
      'delete a/db-1 (ReplicaSet/db-rs)',
    ]);
  });
});
