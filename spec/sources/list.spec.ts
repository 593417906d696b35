import { NetworkError, ProtocolError, StatusError } from '../../lib/sources/errors';
import { list$ } from '../../lib/sources/list';
import type { ListPage } from '../../lib/sources/listerWatcher';
import { defineResource } from '../../lib/resource';
import { collect, kubeConfigFor, listedPod, sendJson, startServer, tokenForTests, type TestServer } from './support';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const nodes = defineResource({ group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false });
const widgets = defineResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

function podList(items: unknown[], metadata: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'PodList', apiVersion: 'v1', metadata, items };
}

describe('list$', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  it('follows continue tokens page by page, sending the resourceVersion only on the first page', async () => {
    server = await startServer((_req, res, seen) => {
      const token = seen.query.get('continue');
      if (token === null) sendJson(res, 200, podList([listedPod('a'), listedPod('b')], { resourceVersion: '10', continue: 't1', remainingItemCount: 3 }));
      else if (token === 't1') sendJson(res, 200, podList([listedPod('c'), listedPod('d')], { resourceVersion: '10', continue: 't2', remainingItemCount: 1 }));
      else sendJson(res, 200, podList([listedPod('e')], { resourceVersion: '10', continue: '' }));
    });
    const kubeConfig = kubeConfigFor({ server: server.url, user: { token: tokenForTests } });
    const result = await collect(list$(kubeConfig, pods, { limit: 2, resourceVersion: '0', resourceVersionMatch: 'NotOlderThan' }));
    expect(result.completed).toBe(true);
    expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(result.values.map(({ last, remainingItemCount, itemsSoFar, resourceVersion }) => ({ last, remainingItemCount, itemsSoFar, resourceVersion }))).toEqual([
      { last: false, remainingItemCount: 3, itemsSoFar: 2, resourceVersion: '10' },
      { last: false, remainingItemCount: 1, itemsSoFar: 4, resourceVersion: '10' },
      { last: true, remainingItemCount: undefined, itemsSoFar: 5, resourceVersion: '10' },
    ]);
    expect(server.requests.map((r) => Object.fromEntries(r.query))).toEqual([
      { limit: '2', resourceVersion: '0', resourceVersionMatch: 'NotOlderThan' },
      { limit: '2', continue: 't1' },
      { limit: '2', continue: 't2' },
    ]);
  });

  it('pages by 500 by default, and asks for everything at once with limit 0', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, podList([], { resourceVersion: '1' })));
    const kubeConfig = kubeConfigFor({ server: server.url });
    await collect(list$(kubeConfig, pods));
    await collect(list$(kubeConfig, pods, { limit: 0 }));
    expect(server.requests.map((r) => r.query.get('limit'))).toEqual(['500', null]);
  });

  it('emits a page as soon as it arrives, before the next is answered', async () => {
    let releaseSecond: () => void = () => undefined;
    server = await startServer((_req, res, seen) => {
      if (seen.query.get('continue') === null) sendJson(res, 200, podList([listedPod('a')], { resourceVersion: '5', continue: 'next' }));
      else releaseSecond = () => sendJson(res, 200, podList([listedPod('b')], { resourceVersion: '5' }));
    });
    const pages: ListPage[] = [];
    let completed = false;
    const done = new Promise<void>((resolve) =>
      list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }).subscribe({
        next: (page) => pages.push(page),
        complete: () => {
          completed = true;
          resolve();
        },
      }),
    );
    await server.request(1);
    expect(pages.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a']]);
    expect(completed).toBe(false);
    releaseSecond();
    await done;
    expect(pages.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
  });

  it('gives list items the kind and apiVersion the API leaves out, and keeps those present', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, 200, { kind: 'WidgetList', apiVersion: 'example.com/v1', metadata: { resourceVersion: '3' }, items: [listedPod('w1'), { ...listedPod('w2'), kind: 'Gadget', apiVersion: 'x/v2' }] }),
    );
    const [page] = (await collect(list$(kubeConfigFor({ server: server.url }), widgets))).values;
    expect(page?.items.map(({ kind, apiVersion }) => ({ kind, apiVersion }))).toEqual([
      { kind: 'Widget', apiVersion: 'example.com/v1' },
      { kind: 'Gadget', apiVersion: 'x/v2' },
    ]);
  });

  it.each([
    ['one namespace of a core resource', pods, { namespace: 'team a' }, '/api/v1/namespaces/team%20a/pods'],
    ['all namespaces of a core resource', pods, {}, '/api/v1/pods'],
    ['a cluster-scoped resource, ignoring any namespace', nodes, { namespace: 'x' }, '/api/v1/nodes'],
    ['one namespace of a custom resource', widgets, { namespace: 'a' }, '/apis/example.com/v1/namespaces/a/widgets'],
    ['all namespaces of a custom resource', widgets, {}, '/apis/example.com/v1/widgets'],
  ])('requests the collection path of %s', async (_name, resource, scope, expectedPath) => {
    server = await startServer((_req, res) => sendJson(res, 200, { kind: 'List', items: [], metadata: { resourceVersion: '1' } }));
    await collect(list$(kubeConfigFor({ server: server.url }), resource, scope));
    expect((await server.request(0)).path).toBe(expectedPath);
  });

  it('passes label and field selectors on every page, encoded', async () => {
    server = await startServer((_req, res, seen) =>
      sendJson(res, 200, podList([], seen.query.get('continue') === null ? { resourceVersion: '1', continue: 'c' } : { resourceVersion: '1' })),
    );
    await collect(list$(kubeConfigFor({ server: server.url }), pods, { labelSelector: 'app in (a,b),tier!=db', fieldSelector: 'spec.nodeName=n1' }));
    for (const seen of server.requests) {
      expect(seen.query.get('labelSelector')).toBe('app in (a,b),tier!=db');
      expect(seen.query.get('fieldSelector')).toBe('spec.nodeName=n1');
    }
    expect(server.requests).toHaveLength(2);
  });

  it('fails with StatusError 410 when the continue token expires mid-list, after the pages already received', async () => {
    server = await startServer((_req, res, seen) => {
      if (seen.query.get('continue') === null) sendJson(res, 200, podList([listedPod('a')], { resourceVersion: '5', continue: 'old' }));
      else sendJson(res, 410, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'The provided continue parameter is too old', reason: 'Expired', code: 410 });
    });
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
    expect(result.values).toHaveLength(1);
    expect(result.error).toBeInstanceOf(StatusError);
    expect(result.error).toMatchObject({ code: 410, reason: 'Expired' });
  });

  it('fails with StatusError for a 403, keeping the Status message', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, 403, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'pods is forbidden: User "x" cannot list resource "pods"', reason: 'Forbidden', code: 403 }),
    );
    const result = await collect(list$(kubeConfigFor({ server: server.url, user: { token: tokenForTests } }), pods));
    expect(result.error).toMatchObject({ kind: 'status', code: 403, reason: 'Forbidden' });
    expect((result.error as StatusError).message).toContain('cannot list');
    expect(JSON.stringify(result.error)).not.toContain(tokenForTests);
  });

  it.each([
    ['an HTML page', 'text/html', '<html><body>proxy login</body></html>', 'non-json-body'],
    ['JSON that does not parse', 'application/json', '{"kind":"PodList",', 'non-json-body'],
    ['a Status instead of a list', 'application/json', '{"kind":"Status","apiVersion":"v1","code":200}', 'not-a-list'],
    ['an object without items', 'application/json', '{"kind":"PodList","metadata":{}}', 'not-a-list'],
    ['a JSON array', 'application/json', '[1,2]', 'not-a-list'],
    ['an item without metadata', 'application/json', '{"kind":"PodList","metadata":{},"items":[{"spec":{}}]}', 'missing-metadata'],
  ])('fails with ProtocolError for %s on a 200', async (_name, contentType, body, problem) => {
    server = await startServer((_req, res) => res.writeHead(200, { 'Content-Type': contentType }).end(body));
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
    expect(result.error).toBeInstanceOf(ProtocolError);
    expect((result.error as ProtocolError).problem).toBe(problem);
  });

  it('accepts null items as an empty list', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { kind: 'PodList', metadata: { resourceVersion: '9' }, items: null }));
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
    expect(result.values).toEqual([{ items: [], resourceVersion: '9', last: true, remainingItemCount: undefined, itemsSoFar: 0 }]);
  });

  it('fails with NetworkError when the connection breaks inside a page', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":"PodList","items":[');
      setImmediate(() => res.socket?.destroy());
    });
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
    expect(result.error).toBeInstanceOf(NetworkError);
  });

  it('aborts the request in flight on unsubscribe', async () => {
    server = await startServer((_req, res, seen) => {
      if (seen.query.get('continue') === null) sendJson(res, 200, podList([listedPod('a')], { resourceVersion: '5', continue: 'next' }));
      else res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders();
    });
    const pages: ListPage[] = [];
    const subscription = list$(kubeConfigFor({ server: server.url }), pods).subscribe((page) => pages.push(page));
    const second = await server.request(1);
    subscription.unsubscribe();
    await second.closed;
    expect(pages).toHaveLength(1);
  });
});
