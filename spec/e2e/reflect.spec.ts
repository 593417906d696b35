import { silentLogger } from '../../lib/base/logger';
import { ReplaySubject, filter, firstValueFrom, take, toArray } from 'rxjs';
import type { Observable, Subscription } from 'rxjs';
import type { Delta } from '../../lib/reflector/delta';
import type { Health } from '../../lib/reflector/health';
import { reflect, reflectorEvents } from '../../lib/reflector/reflect';
import type { ReflectConfig } from '../../lib/reflector/reflect';
import { defineResource } from '../../lib/resources/resource';
import { StatusError } from '../../lib/base/errors';
import { kubeListerWatcher } from '../../lib/sources/kubeListerWatcher';
import type { KubeObject } from '../../lib/base/object';
import { serverProfile, startApiServer } from '../../apiserver/src';
import type { ApiServer, ApiServerOptions } from '../../apiserver/src';
import { eventually, within } from '../support/eventually';
import { describeEachServerVersion } from '../support/serverVersions';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name } });
const fastBackoff: ReflectConfig['backoff'] = { initialMs: 10, maxMs: 50 };

/** A running reflector whose deltas and health reports are replayed to every waiter. */
interface Running {
  readonly deltas: Observable<Delta>;
  readonly health: Observable<Health>;
  readonly subscription: Subscription;
}

describeEachServerVersion('reflect against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  let running: Running | undefined;
  const start = async (options: ApiServerOptions = {}): Promise<ApiServer> => {
    server = await startApiServer({ serverVersion, ...options });
    return server;
  };
  const run = (config: ReflectConfig = {}): Running => {
    const deltas = new ReplaySubject<Delta>();
    const health = new ReplaySubject<Health>();
    const subscription = reflectorEvents(kubeListerWatcher(server.kubeConfig, pods, { namespace: 'default' }), { backoff: fastBackoff, logger: silentLogger, ...config }).subscribe({
      next: (event) => {
        if (event.type === 'health') health.next(event.health);
        else if (event.type !== 'opened' && event.type !== 'ended') deltas.next(event);
      },
      error: (error: unknown) => deltas.error(error),
      complete: () => deltas.complete(),
    });
    running = { deltas, health, subscription };
    return running;
  };
  /** The first `count` values of `source` that match, bounded: past the deadline it names what it waited for and lists what came. */
  const nth = <T>(source: Observable<T>, predicate: (value: T) => boolean, count = 1): Promise<T[]> => {
    const seen: T[] = [];
    const collecting = source.subscribe((value) => seen.push(value));
    return within(firstValueFrom(source.pipe(filter(predicate), take(count), toArray())), 10_000, `${count} value(s) matching ${predicate.toString()}`, () => seen).finally(() =>
      collecting.unsubscribe(),
    );
  };
  const watchQueries = () => server.requests.entries.filter((entry) => entry.verb === 'watch').map((entry) => entry.query);
  const listQueries = () => server.requests.entries.filter((entry) => entry.verb === 'list').map((entry) => entry.query);

  afterEach(async () => {
    running?.subscription.unsubscribe();
    running = undefined;
    await server?.close();
  });

  it('lists at "0" with limit 500, then watches from the list version and delivers changes as deltas', async () => {
    await start();
    server.store.create(pods, pod('a'));
    server.store.create(pods, pod('b'));
    const { deltas } = run({ streamingList: false });
    const [replace] = await nth(deltas, (d) => d.type === 'Replace');
    expect(replace).toMatchObject({ first: true, last: true, resourceVersion: server.store.resourceVersion });
    expect(replace?.type === 'Replace' && replace.items.map((p) => p.metadata.name).sort()).toEqual(['a', 'b']);
    const listRv = server.store.resourceVersion;
    await eventually(() => expect(watchQueries()).toHaveLength(1));
    server.store.create(pods, pod('c'));
    server.store.update(pods, { ...pod('c'), metadata: { ...pod('c').metadata, labels: { x: 'y' } } });
    server.store.delete(pods, 'default', 'c');
    const changes = await nth(deltas, (d) => d.type !== 'Replace' && d.type !== 'Bookmark', 3);
    expect(changes.map((d) => d.type)).toEqual(['Added', 'Updated', 'Deleted']);
    expect(listQueries()[0]).toMatchObject({ resourceVersion: '0', limit: '500' });
    const watch = watchQueries()[0];
    expect(watch).toMatchObject({ resourceVersion: listRv, allowWatchBookmarks: 'true' });
    expect(Number(watch?.['timeoutSeconds'])).toBeGreaterThanOrEqual(300);
    expect(Number(watch?.['timeoutSeconds'])).toBeLessThan(600);
  });

  it('re-watches from the last version after a clean close, and relists at that version, unpaged, after a 410', async () => {
    await start();
    server.store.create(pods, pod('a'));
    server.faults.inject({ kind: 'closeAfterEvents', events: 1 }, { verb: 'watch' });
    server.faults.inject({ kind: 'status', code: 410, reason: 'Expired', message: 'too old resource version' }, { verb: 'watch' });
    const { deltas } = run({ streamingList: false });
    await nth(deltas, (d) => d.type === 'Replace');
    const listRv = server.store.resourceVersion;
    await eventually(() => expect(watchQueries()).toHaveLength(1));
    const created = server.store.create(pods, pod('b'));
    const [relist] = await nth(deltas, (d) => d.type === 'Replace', 2).then((all) => all.slice(1));
    expect(relist?.type === 'Replace' && relist.items.map((p) => p.metadata.name).sort()).toEqual(['a', 'b']);
    const afterCreate = created.metadata.resourceVersion;
    expect(watchQueries().slice(0, 2).map((q) => q['resourceVersion'])).toEqual([listRv, afterCreate]);
    expect(listQueries().map((q) => q['resourceVersion'])).toEqual(['0', afterCreate]);
    expect(listQueries()[1]?.['limit']).toBeUndefined();
  });

  it('keeps retrying a 403 and shows it in health, never erroring', async () => {
    await start({ deny: [{ verb: 'list', resource: 'pods' }] });
    const { health, deltas } = run({ streamingList: false });
    let errored = false;
    deltas.subscribe({ error: () => (errored = true) });
    const failures = await nth(health, (h) => h.phase === 'backingOff', 3);
    expect(failures.map((h) => h.attempt)).toEqual([1, 2, 3]);
    expect(failures[0]?.lastError).toBeInstanceOf(StatusError);
    expect((failures[0]?.lastError as StatusError).code).toBe(403);
    expect(errored).toBe(false);
  });

  const streams = serverProfile(serverVersion).watchList === 'on';
  it(
    streams
      ? 'streams the initial list by default, as one Replace, and goes on watching on the same connection'
      : 'asks for a streaming list by default, and lists at "0" at once when the server refuses it',
    async () => {
      await start();
      server.store.create(pods, pod('a'));
      server.store.create(pods, pod('b'));
      const { deltas } = run();
      const [replace] = await nth(deltas, (d) => d.type === 'Replace');
      expect(replace?.type === 'Replace' && replace.items.map((p) => p.metadata.name).sort()).toEqual(['a', 'b']);
      server.store.create(pods, pod('c'));
      const [addedDelta] = await nth(deltas, (d) => d.type === 'Added');
      expect(addedDelta?.type === 'Added' && addedDelta.object.metadata.name).toBe('c');
      const streamingList = { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' };
      expect(watchQueries()[0]).toMatchObject(streamingList);
      if (streams) {
        expect(listQueries()).toEqual([]);
        expect(watchQueries()).toHaveLength(1);
      } else {
        expect(server.requests.entries[0]?.status).toBe(422);
        expect(listQueries()).toEqual([{ limit: '500', resourceVersion: '0' }]);
        expect(watchQueries()).toHaveLength(2);
        expect(watchQueries()[1]).not.toHaveProperty('sendInitialEvents');
      }
    },
  );
});

/**
 * Only an API server whose watch cache is off pages a list at "0" (client-go's `reflector.go`,
 * `paginatedResult`: "Paginated result returned for request with ResourceVersion="0" mean that
 * watch cache is disabled"); the loopback server without a `serverVersion` answers like one.
 */
describe('reflect against an API server that pages a list at "0" (its watch cache off)', () => {
  it('passes the pages on as Replace pages', async () => {
    const server = await startApiServer();
    for (let i = 0; i < 5; i++) server.store.create(pods, pod(`p${i}`));
    const replaces = reflect(kubeListerWatcher(server.kubeConfig, pods, { namespace: 'default' }), { backoff: fastBackoff, pageSize: 2, streamingList: false });
    const pages = await within(firstValueFrom(replaces.pipe(filter((d) => d.type === 'Replace'), take(3), toArray())), 10_000, 'three Replace pages').finally(() => server.close());
    expect(pages.map((d) => d.type === 'Replace' && [d.items.length, d.first, d.last])).toEqual([
      [2, true, false],
      [2, false, false],
      [1, false, true],
    ]);
  });
});
