import { ProtocolError } from '../../lib/base/errors';
import { kubeListerWatcher } from '../../lib/sources/kubeListerWatcher';
import { defineResource } from '../../lib/resources/resource';
import { collect, kubeConfigFor, sendJson, startServer, type TestServer } from './support';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });

describe('kubeListerWatcher', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer((_req, res, seen) => {
      if (seen.query.get('watch') === 'true') res.writeHead(200, { 'Content-Type': 'application/json' }).end();
      else sendJson(res, 200, { kind: 'PodList', metadata: { resourceVersion: '7' }, items: [] });
    });
  });
  afterEach(async () => {
    await server.close();
  });

  it('lists and watches within its scope, adding the per-request options', async () => {
    const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods, { namespace: 'a', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' });
    const listed = await collect(lw.list({ resourceVersion: '0', limit: 10 }));
    const watched = await collect(lw.watch({ resourceVersion: '7', allowWatchBookmarks: true, timeoutSeconds: 300 }));
    expect(listed.values[0]?.resourceVersion).toBe('7');
    expect(watched.completed).toBe(true);
    expect(server.requests.map((r) => [r.path, Object.fromEntries(r.query)])).toEqual([
      ['/api/v1/namespaces/a/pods', { limit: '10', resourceVersion: '0', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' }],
      [
        '/api/v1/namespaces/a/pods',
        { watch: 'true', resourceVersion: '7', allowWatchBookmarks: 'true', timeoutSeconds: '300', labelSelector: 'app=web', fieldSelector: 'spec.nodeName=n1' },
      ],
    ]);
  });

  it('lets a selector given per request replace the scope one, and keeps the scope one when the request leaves it unset', async () => {
    const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods, { labelSelector: 'app=web' });
    await collect(lw.list({ labelSelector: 'app=db' }));
    await collect(lw.list({ labelSelector: undefined }));
    expect(server.requests.map((r) => r.query.get('labelSelector'))).toEqual(['app=db', 'app=web']);
    expect(server.requests.map((r) => r.path)).toEqual(['/api/v1/pods', '/api/v1/pods']);
  });

  it('passes its options to every list and watch: read-ahead off, excerpts withheld', async () => {
    // Two pages whose first names its continue token at once but ends late, then a malformed watch line.
    const order: string[] = [];
    const secretValue = 'not-for-logs';
    await server.close();
    server = await startServer((_req, res, seen) => {
      if (seen.query.get('watch') === 'true') {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(`{"type":"ADDED","object":${secretValue}\n`);
        return;
      }
      const first = seen.query.get('continue') === null;
      order.push(`page ${first ? 1 : 2} requested`);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`{"kind":"PodList","metadata":{"resourceVersion":"7"${first ? ',"continue":"t1"' : ''}},"items":[`);
      setTimeout(() => {
        order.push(`page ${first ? 1 : 2} ended`);
        res.end(']}');
      }, 100);
    });
    const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods, {}, { listReadAhead: false, withholdExcerpts: true });
    await collect(lw.list({ limit: 1 }));
    expect(order).toEqual(['page 1 requested', 'page 1 ended', 'page 2 requested', 'page 2 ended']);
    const watched = await collect(lw.watch({ resourceVersion: '7' }));
    expect(watched.error).toBeInstanceOf(ProtocolError);
    expect((watched.error as ProtocolError).excerpt).toBeUndefined();
    expect((watched.error as ProtocolError).message).not.toContain(secretValue);
  });

  it('asks for gzip on lists and watches, unless compression is off', async () => {
    for (const compression of [undefined, false]) {
      const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods, {}, { compression });
      await collect(lw.list({}));
      await collect(lw.watch({ resourceVersion: '7' }));
    }
    expect(server.requests.map((r) => r.headers['accept-encoding'])).toEqual(['gzip', 'gzip', undefined, undefined]);
  });

  it('passes incremental decoding to its lists', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ metadata: { name: `p-${i}`, namespace: 'default' } }));
    await server.close();
    server = await startServer((_req, res) => sendJson(res, 200, { kind: 'PodList', metadata: { resourceVersion: '7' }, items }));
    const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods, {}, { incrementalDecoding: { afterChars: 100, batchChars: 200 } });
    const listed = await collect(lw.list({}));
    expect(listed.values.length).toBeGreaterThan(3);
    expect(listed.values.flatMap((page) => page.items.map((item) => item.metadata.name))).toEqual(items.map((item) => item.metadata.name));
  });

  it('is cold: nothing is requested until a subscription', async () => {
    const lw = kubeListerWatcher(kubeConfigFor({ server: server.url }), pods);
    lw.list({});
    lw.watch({});
    await collect(lw.list({}));
    expect(server.requests).toHaveLength(1);
  });
});
