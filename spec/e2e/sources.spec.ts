import { VirtualTimeScheduler } from 'rxjs';
import { isExpired, isTooLargeResourceVersion, IdleTimeoutError, NetworkError, ProtocolError, StatusError } from '../../lib/base/errors';
import { kubeListerWatcher } from '../../lib/sources/kubeListerWatcher';
import { list$ } from '../../lib/sources/list';
import type { ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { watch$ } from '../../lib/sources/watch';
import { defineResource } from '../../lib/resources/resource';
import type { KubeObject } from '../../lib/base/object';
import { serverProfile, startApiServer, testCertificates, widgets, type ApiServer, type ApiServerOptions } from '../../apiserver/src';
import { collect, kubeConfigFor, startProxy } from '../sources/support';
import { describeEachServerVersion } from '../support/serverVersions';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const namespaces = defineResource({ group: '', version: 'v1', plural: 'namespaces', kind: 'Namespace', namespaced: false });
const base64 = (text: string): string => Buffer.from(text).toString('base64');
const names = (objects: readonly KubeObject[]): string[] => objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
const itemsOf = (pages: readonly ListPage[]): KubeObject[] => pages.flatMap((page) => page.items);

function pod(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, labels } };
}

/** Takes events until `count` have arrived, then unsubscribes; rejects naming them after 10 s. */
function firstEvents<T extends KubeObject>(source: import('rxjs').Observable<WatchEvent<T>>, count: number): Promise<WatchEvent<T>[]> {
  const events: WatchEvent<T>[] = [];
  const arrived = new Promise<WatchEvent<T>[]>((resolve, reject) => {
    const subscription = source.subscribe({
      next: (event) => {
        events.push(event);
        if (events.length === count) {
          resolve(events);
          queueMicrotask(() => subscription.unsubscribe());
        }
      },
      error: reject,
      complete: () => resolve(events),
    });
  });
  return within(arrived, EVENTUALLY_MS, `${count} watch events`, () => events.map((e) => `${e.type} ${e.object.metadata.name}`));
}

describeEachServerVersion('sources against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  const start = async (options: ApiServerOptions = {}): Promise<ApiServer> => {
    server = await startApiServer({ serverVersion, ...options });
    return server;
  };
  afterEach(async () => {
    await server?.close();
  });

  describe('list$', () => {
    it('pages through a large list with continue tokens at one resourceVersion', async () => {
      await start();
      for (let i = 0; i < 7; i++) server.store.create(pods, pod(i % 2 === 0 ? 'a' : 'b', `p${i}`));
      const result = await collect(list$(server.kubeConfig, pods, { limit: 3 }));
      expect(result.completed).toBe(true);
      expect(result.values.map((p) => p.items.length)).toEqual([3, 3, 1]);
      expect(result.values.map((p) => p.last)).toEqual([false, false, true]);
      expect(result.values.map((p) => p.itemsSoFar)).toEqual([3, 6, 7]);
      expect(result.values[0]?.remainingItemCount).toBe(4);
      expect(new Set(result.values.map((p) => p.resourceVersion))).toEqual(new Set([server.store.resourceVersion]));
      expect(itemsOf(result.values).every((item) => item.kind === 'Pod' && item.apiVersion === 'v1')).toBe(true);
      const lists = server.requests.entries.filter((r) => r.verb === 'list');
      expect(lists.map((r) => r.query['continue'] !== undefined)).toEqual([false, true, true]);
    });

    it('lists one namespace or all of them', async () => {
      await start();
      server.store.create(pods, pod('a', 'p1'));
      server.store.create(pods, pod('b', 'p2'));
      expect(names(itemsOf((await collect(list$(server.kubeConfig, pods, { namespace: 'a' }))).values))).toEqual(['a/p1']);
      expect(names(itemsOf((await collect(list$(server.kubeConfig, pods))).values))).toEqual(['a/p1', 'b/p2']);
    });

    it('lists a cluster-scoped resource', async () => {
      await start();
      server.store.create(namespaces, { metadata: { name: 'team-a' } });
      const items = itemsOf((await collect(list$(server.kubeConfig, namespaces))).values);
      expect(items.map((i) => i.metadata.name)).toContain('team-a');
      expect(items.every((i) => i.kind === 'Namespace')).toBe(true);
    });

    it('lists a custom resource of a named group', async () => {
      await start();
      server.store.create(widgets, { metadata: { namespace: 'a', name: 'w1' }, spec: { size: 3 } });
      const items = itemsOf((await collect(list$(server.kubeConfig, widgets))).values);
      expect(items).toEqual([expect.objectContaining({ kind: 'Widget', apiVersion: 'example.com/v1', spec: { size: 3 } })]);
    });

    it('applies label and field selectors', async () => {
      await start();
      server.store.create(pods, pod('a', 'web-1', { app: 'web' }));
      server.store.create(pods, pod('a', 'db-1', { app: 'db' }));
      server.store.create(pods, pod('b', 'web-2', { app: 'web' }));
      expect(names(itemsOf((await collect(list$(server.kubeConfig, pods, { labelSelector: 'app=web' }))).values))).toEqual(['a/web-1', 'b/web-2']);
      expect(names(itemsOf((await collect(list$(server.kubeConfig, pods, { fieldSelector: 'metadata.name=db-1' }))).values))).toEqual(['a/db-1']);
    });

    it('fails with StatusError 410 when the continue token expires mid-list', async () => {
      await start();
      for (let i = 0; i < 4; i++) server.store.create(pods, pod('a', `p${i}`));
      const expiring = new Promise<unknown>((resolve) => {
        list$(server.kubeConfig, pods, { limit: 2 }).subscribe({
          // The next page is requested once this returns, with a token now expired.
          next: () => server.faults.expireContinueTokens(),
          error: resolve,
          complete: () => resolve(undefined),
        });
      });
      const error = await within(expiring, EVENTUALLY_MS, 'the list to fail on its expired continue token');
      expect(isExpired(error)).toBe(true);
    });
  });

  describe('watch$', () => {
    it('streams changes after a resourceVersion', async () => {
      await start();
      server.store.create(pods, pod('a', 'before'));
      const from = server.store.resourceVersion;
      const events = firstEvents(watch$(server.kubeConfig, pods, { resourceVersion: from }), 3);
      const created = server.store.create(pods, pod('a', 'p1'));
      server.store.update(pods, { ...created, metadata: { ...created.metadata, labels: { v: '2' } } });
      server.store.delete(pods, 'a', 'p1');
      expect((await events).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED p1', 'MODIFIED p1', 'DELETED p1']);
    });

    it('watches one namespace with a label selector through kubeListerWatcher', async () => {
      await start();
      const from = server.store.resourceVersion;
      const lw = kubeListerWatcher(server.kubeConfig, pods, { namespace: 'a', labelSelector: 'app=web' });
      const events = firstEvents(lw.watch({ resourceVersion: from }), 1);
      server.store.create(pods, pod('b', 'other-ns', { app: 'web' }));
      server.store.create(pods, pod('a', 'other-label', { app: 'db' }));
      server.store.create(pods, pod('a', 'match', { app: 'web' }));
      expect((await events).map((e) => e.object.metadata.name)).toEqual(['match']);
    });

    it('receives bookmarks when it allows them', async () => {
      await start({ bookmarkIntervalMs: 20 });
      const events = await firstEvents(watch$(server.kubeConfig, pods, { resourceVersion: server.store.resourceVersion, allowWatchBookmarks: true }), 1);
      expect(events[0]?.type).toBe('BOOKMARK');
      expect(typeof events[0]?.object.metadata.resourceVersion).toBe('string');
    });

    if (serverProfile(serverVersion).watchList === 'on') {
      it('streams a list: initial ADDED events, then the annotated end-of-initial-events bookmark', async () => {
        await start();
        server.store.create(pods, pod('a', 'p1'));
        server.store.create(pods, pod('a', 'p2'));
        const events = await firstEvents(watch$(server.kubeConfig, pods, { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersion: '' }), 3);
        expect(events.slice(0, 2).map((e) => `${e.type} ${e.object.metadata.name}`).sort()).toEqual(['ADDED p1', 'ADDED p2']);
        expect(events[2]?.type).toBe('BOOKMARK');
        expect(events[2]?.object.metadata.annotations?.['k8s.io/initial-events-end']).toBe('true');
      });
    } else {
      it('fails with StatusError 422 when the server does not serve streaming lists', async () => {
        await start();
        const result = await collect(watch$(server.kubeConfig, pods, { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersion: '' }));
        expect(result.error).toBeInstanceOf(StatusError);
        expect(result.error).toMatchObject({ code: 422, reason: 'Invalid' });
      });
    }

    it('fails with StatusError 410 when watching from a compacted resourceVersion', async () => {
      await start();
      const old = server.store.resourceVersion;
      server.store.create(pods, pod('a', 'p1'));
      server.store.compact();
      const result = await collect(watch$(server.kubeConfig, pods, { resourceVersion: old }));
      expect(result.error).toBeInstanceOf(StatusError);
      expect(result.error).toMatchObject({ code: 410 });
    });

    it('completes when the server ends the watch cleanly', async () => {
      await start();
      server.faults.inject({ kind: 'closeAfterEvents', events: 1 }, { verb: 'watch' });
      const watching = collect(watch$(server.kubeConfig, pods, { resourceVersion: server.store.resourceVersion }));
      await waitForWatch(server);
      server.store.create(pods, pod('a', 'p1'));
      const result = await watching;
      expect(result.completed).toBe(true);
      expect(result.values).toHaveLength(1);
    });

    it('fails with NetworkError when the connection is cut mid-line', async () => {
      await start();
      server.faults.inject({ kind: 'cutMidLine', afterEvents: 1 }, { verb: 'watch' });
      const watching = collect(watch$(server.kubeConfig, pods, { resourceVersion: server.store.resourceVersion }));
      await waitForWatch(server);
      server.store.create(pods, pod('a', 'p1'));
      server.store.create(pods, pod('a', 'p2'));
      const result = await watching;
      expect(result.values.map((e) => e.object.metadata.name)).toEqual(['p1']);
      expect(result.error).toBeInstanceOf(NetworkError);
    });

    it('fails with ProtocolError malformed-json on a garbage line', async () => {
      await start();
      server.faults.inject({ kind: 'garbageLine', afterEvents: 0 }, { verb: 'watch' });
      const watching = collect(watch$(server.kubeConfig, pods, { resourceVersion: server.store.resourceVersion }));
      await waitForWatch(server);
      server.store.create(pods, pod('a', 'p1'));
      const result = await watching;
      expect(result.error).toBeInstanceOf(ProtocolError);
      expect((result.error as ProtocolError).problem).toBe('malformed-json');
    });

    it('fails with IdleTimeoutError while the server stalls', async () => {
      await start();
      server.faults.inject({ kind: 'stall', ms: 60_000 }, { verb: 'watch' });
      const scheduler = new VirtualTimeScheduler();
      let failure: unknown;
      watch$(server.kubeConfig, pods, { resourceVersion: server.store.resourceVersion, idleTimeoutMs: 5_000, scheduler }).subscribe({ error: (e: unknown) => (failure = e) });
      await waitForWatch(server);
      server.store.create(pods, pod('a', 'p1'));
      scheduler.flush();
      expect(failure).toBeInstanceOf(IdleTimeoutError);
    });

    it('aborts the request on unsubscribe: the server side of the connection closes', async () => {
      await start();
      const proxy = await startProxy(server.url);
      try {
        const kubeConfig = kubeConfigFor({ server: 'http://kubernetes.invalid:80', cluster: { proxyUrl: proxy.url, skipTLSVerify: true } });
        server.store.create(pods, pod('a', 'p1'));
        // From "0" every version starts with the objects it holds: synthetic ADDED events, or a streaming list.
        const events = await firstEvents(watch$(kubeConfig, pods, { resourceVersion: '0' }), 1);
        expect(events).toHaveLength(1);
        await within(proxy.tunnelsClosed[0]!, EVENTUALLY_MS, 'the tunnel of the unsubscribed watch to close');
      } finally {
        await proxy.close();
      }
    });
  });

  describe('HTTP failures become typed errors', () => {
    it('401 without the bearer token the server wants', async () => {
      await start({ token: 'right' });
      const kubeConfig = kubeConfigFor({ server: server.url, user: { token: 'wrong-token-value' } });
      const result = await collect(list$(kubeConfig, pods));
      expect(result.error).toMatchObject({ kind: 'status', code: 401, reason: 'Unauthorized' });
      expect(`${(result.error as Error).message}${JSON.stringify(result.error)}`).not.toContain('wrong-token-value');
    });

    it('403 for a denied verb, with the real message shape', async () => {
      await start({ deny: [{ verb: 'watch', resource: 'pods' }] });
      const result = await collect(watch$(server.kubeConfig, pods, { namespace: 'a' }));
      expect(result.error).toMatchObject({ kind: 'status', code: 403, reason: 'Forbidden' });
      expect((result.error as StatusError).status.message).toContain('cannot watch resource "pods"');
    });

    it.each([
      ['429 with a Status body', { kind: 'status', code: 429, reason: 'TooManyRequests', retryAfterSeconds: 2 } as const, { code: 429, retryAfterSeconds: 2 }],
      ['429 in the plain-text priority-and-fairness form', { kind: 'plainText429', retryAfterSeconds: 1 } as const, { code: 429, reason: 'TooManyRequests', retryAfterSeconds: 1 }],
      ['500', { kind: 'status', code: 500, reason: 'InternalError', message: 'boom' } as const, { code: 500, reason: 'InternalError' }],
      ['504', { kind: 'status', code: 504, reason: 'Timeout' } as const, { code: 504, reason: 'Timeout' }],
    ])('%s on list and on watch', async (_name, fault, expected) => {
      await start();
      server.faults.inject(fault, { times: 2 });
      const listed = await collect(list$(server.kubeConfig, pods));
      const watched = await collect(watch$(server.kubeConfig, pods));
      for (const { error } of [listed, watched]) {
        expect(error).toBeInstanceOf(StatusError);
        expect(error).toMatchObject(expected);
      }
    });

    it('504 too large resource version is recognisable', async () => {
      await start();
      server.faults.inject({ kind: 'tooLargeResourceVersion' });
      const result = await collect(list$(server.kubeConfig, pods, { resourceVersion: '999999', resourceVersionMatch: 'NotOlderThan' }));
      expect(isTooLargeResourceVersion(result.error)).toBe(true);
    });
  });

  describe('TLS', () => {
    it('lists and watches over https, verifying the server with the test CA of the kubeconfig', async () => {
      await start({ tls: true, token: 'sekret' });
      expect(server.url.startsWith('https://')).toBe(true);
      server.store.create(pods, pod('a', 'p1'));
      expect(names(itemsOf((await collect(list$(server.kubeConfig, pods))).values))).toEqual(['a/p1']);
      const events = await firstEvents(watch$(server.kubeConfig, pods, { resourceVersion: '0' }), 1);
      expect(events[0]?.object.metadata.name).toBe('p1');
    });

    it('authenticates with a client certificate', async () => {
      await start({ tls: true, token: 'sekret' });
      const kubeConfig = kubeConfigFor({
        server: server.url,
        cluster: { caData: base64(testCertificates.caCert) },
        user: { certData: base64(testCertificates.clientCert), keyData: base64(testCertificates.clientKey) },
      });
      server.store.create(pods, pod('a', 'p1'));
      const result = await collect(list$(kubeConfig, pods));
      expect(result.completed).toBe(true);
      expect(names(itemsOf(result.values))).toEqual(['a/p1']);
    });

    it('refuses a server its CA does not vouch for', async () => {
      await start({ tls: true });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
      expect(result.error).toBeInstanceOf(NetworkError);
    });
  });
});

/** Resolves once the server has logged a watch request (checked at every turn of the event loop). */
async function waitForWatch(server: ApiServer): Promise<void> {
  await eventually(() => expect(server.requests.entries.map((r) => r.verb)).toContain('watch'), { pause: () => new Promise((resolve) => setImmediate(resolve)) });
}
