import { silentLogger } from '../../lib/base/logger';
import { configMaps, leases, namespaces, type ConfigMap, type Namespace } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { CONFIG_MAP, main, MANAGED_BY } from '../../examples/teamNamespaces';
import { Lines } from './lines';
import { describeEachServerVersion } from '../support/serverVersions';

/** Short election timings, so that hand-overs take a fraction of a second. */
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 200 };

function teamNamespace(name: string, team?: string): Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(team === undefined ? {} : { labels: { team } }) } };
}

describeEachServerVersion('example: team namespaces, leader-elected, against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  const replicas: { stop: AbortController; running: Promise<void>; lines: Lines }[] = [];

  const start = async (identity: string): Promise<Lines> => {
    const lines = new Lines();
    const stop = new AbortController();
    // A stopped replica releases its Lease after main() resolves, which can outlive the server at
    // teardown: that warning is not what these specs check.
    const running = main(server.kubeConfig, { identity, timings: TIMINGS, signal: stop.signal, log: lines.log, logger: silentLogger });
    replicas.push({ stop, running, lines });
    await lines.waitFor('caches synced');
    return lines;
  };
  const stop = async (lines: Lines): Promise<void> => {
    const replica = replicas.find((r) => r.lines === lines)!;
    replica.stop.abort();
    await lines.settled(replica.running, 'main() to resolve once aborted');
  };
  const teamOf = (namespace: string): ConfigMap | undefined => server.store.get(configMaps, namespace, CONFIG_MAP);

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, tls: true });
  });
  afterEach(async () => {
    for (const replica of replicas.splice(0)) {
      replica.stop.abort();
      await replica.lines.settled(replica.running.catch(() => undefined), 'main() to settle once aborted');
    }
    await server.close();
  });

  it('gives each team namespace its ConfigMap, keeps it in line with the label, and removes it with the label', async () => {
    server.store.create(namespaces, teamNamespace('shop', 'payments'));
    server.store.create(namespaces, teamNamespace('plain'));
    const lines = await start('a');
    await lines.waitFor('leading');
    await lines.waitFor('created team in shop');
    expect(teamOf('shop')).toMatchObject({ metadata: { labels: MANAGED_BY }, data: { team: 'payments' } });
    expect(teamOf('plain')).toBeUndefined();

    let mark = lines.mark();
    const shop = server.store.get(namespaces, undefined, 'shop')!;
    server.store.update(namespaces, { ...shop, metadata: { ...shop.metadata, labels: { team: 'billing' } } });
    await lines.waitFor('updated team in shop', mark);
    expect(teamOf('shop')?.data).toEqual({ team: 'billing' });

    // Someone deletes it: the ConfigMap informer reports it, and its namespace is reconciled.
    mark = lines.mark();
    server.store.delete(configMaps, 'shop', CONFIG_MAP);
    await lines.waitFor('created team in shop', mark);

    mark = lines.mark();
    const again = server.store.get(namespaces, undefined, 'shop')!;
    server.store.update(namespaces, { ...again, metadata: { ...again.metadata, labels: {} } });
    await lines.waitFor('deleted team in shop', mark);
    expect(teamOf('shop')).toBeUndefined();
  });

  it('retries a failed write with backoff until it succeeds', async () => {
    const lines = await start('a');
    await lines.waitFor('leading');
    server.faults.inject({ kind: 'status', code: 500 }, { verb: 'create', resource: 'configmaps', times: 2 });
    server.store.create(namespaces, teamNamespace('flaky', 'ops'));
    expect(await lines.waitFor(/^retrying flaky in \d+ ms: /)).toBe('retrying flaky in 5 ms: HTTP 500: Internal error occurred: injected fault');
    await lines.waitFor(/^retrying flaky in 10 ms: /);
    await lines.waitFor('created team in flaky');
    expect(teamOf('flaky')?.data).toEqual({ team: 'ops' });
  });

  it('with two replicas, only the leader reconciles, and the other takes over when it stops', async () => {
    const a = await start('a');
    await a.waitFor('leading');
    const b = await start('b');
    await b.waitFor('following a');

    server.store.create(namespaces, teamNamespace('one', 'x'));
    await a.waitFor('created team in one');
    await stop(a);
    expect(a.seen.at(-1)).toBe('stopped');
    // a released the Lease on its way out: b leads at its next try, not a lease duration later.
    await b.waitFor('leading', 0, TIMINGS.leaseDuration);
    expect(server.store.get(leases, 'default', 'team-namespaces')?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

    server.store.create(namespaces, teamNamespace('two', 'y'));
    await b.waitFor('created team in two');
    expect(b.seen.filter((line) => line.startsWith('created'))).toEqual(['created team in two']);
    expect(a.seen.filter((line) => line.startsWith('created'))).toEqual(['created team in one']);
  });
});
