import type { ServerResponse } from 'node:http';
import * as zlib from 'node:zlib';
import { NetworkError, ProtocolError, StatusError } from '../../lib/base/errors';
import { list$ } from '../../lib/sources/list';
import type { ListPage } from '../../lib/sources/listerWatcher';
import { defineResource } from '../../lib/resources/resource';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';
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
    await within(done, EVENTUALLY_MS, 'the list to complete once its second page is sent', () => pages.map((page) => page.items.map((item) => item.metadata.name)));
    expect(pages.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
  });

  describe('reading ahead', () => {
    /** Writes a page's head and first item now; `end` writes the rest. */
    const startPage = (res: ServerResponse, metadata: Record<string, unknown>, name: string): (() => void) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(metadata)},"items":[${JSON.stringify(listedPod(name))}`);
      return () => res.end(']}');
    };

    it('requests the next page as soon as the head of this one names its continue token', async () => {
      let endFirst: () => void = () => undefined;
      const order: string[] = [];
      server = await startServer((_req, res, seen) => {
        if (seen.query.get('continue') === null) {
          order.push('page 1 requested');
          const end = startPage(res, { resourceVersion: '5', continue: 't1' }, 'a');
          endFirst = () => {
            endFirst = () => undefined;
            order.push('page 1 ended');
            end();
          };
          // Held open: only a client that reads ahead asks for page 2 before this fires.
          setTimeout(() => endFirst(), 1000);
        } else {
          order.push('page 2 requested');
          endFirst();
          sendJson(res, 200, podList([listedPod('b')], { resourceVersion: '5' }));
        }
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }));
      expect(order).toEqual(['page 1 requested', 'page 2 requested', 'page 1 ended']);
      expect(result.completed).toBe(true);
      expect(result.values.map((page) => [page.items.map((item) => item.metadata.name), page.itemsSoFar, page.last])).toEqual([
        [['a'], 1, false],
        [['b'], 2, true],
      ]);
    });

    it('holds the body of a page read ahead unread until the pages before it have ended (its server waits on backpressure)', async () => {
      // Far beyond the kernel's socket buffers on loopback, and read whole (not incrementally).
      const bigPod = { ...listedPod('b'), metadata: { ...listedPod('b').metadata, annotations: { filler: 'x'.repeat(24 << 20) } } };
      const bigPage = JSON.stringify(podList([bigPod], { resourceVersion: '5' }));
      const order: string[] = [];
      server = await startServer((_req, res, seen) => {
        if (seen.query.get('continue') === null) {
          const end = startPage(res, { resourceVersion: '5', continue: 't1' }, 'a');
          server.request(1).then(
            () =>
              setTimeout(() => {
                order.push('page 1 ended');
                end();
              }, 500),
            () => undefined,
          );
        } else {
          order.push('page 2 requested');
          res.writeHead(200, { 'content-type': 'application/json' });
          res.on('finish', () => order.push('page 2 written'));
          res.end(bigPage);
        }
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1, incrementalDecoding: { afterChars: 64 << 20 } }));
      expect(order).toEqual(['page 2 requested', 'page 1 ended', 'page 2 written']);
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
      expect(result.values[1]?.items[0]?.metadata.annotations?.['filler']).toHaveLength(24 << 20);
    });

    it('with readAhead false, requests each page only after the one before has ended', async () => {
      const order: string[] = [];
      server = await startServer((_req, res, seen) => {
        const first = seen.query.get('continue') === null;
        order.push(`page ${first ? 1 : 2} requested`);
        const end = startPage(res, first ? { resourceVersion: '5', continue: 't1' } : { resourceVersion: '5' }, first ? 'a' : 'b');
        setTimeout(() => {
          order.push(`page ${first ? 1 : 2} ended`);
          end();
        }, 100);
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1, readAhead: false }));
      expect(order).toEqual(['page 1 requested', 'page 1 ended', 'page 2 requested', 'page 2 ended']);
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
    });

    it('asks for nothing more once a page head says it is the last', async () => {
      server = await startServer((_req, res, seen) => {
        const first = seen.query.get('continue') === null;
        const end = startPage(res, first ? { resourceVersion: '5', continue: 't1' } : { resourceVersion: '5' }, first ? 'a' : 'b');
        setTimeout(end, 20);
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
      expect(server.requests.map((r) => r.query.get('continue'))).toEqual([null, 't1']);
    });

    it('trusts the whole page over its head: a token the end contradicts is dropped and the right one asked for', async () => {
      server = await startServer((_req, res, seen) => {
        const token = seen.query.get('continue');
        if (token === null) {
          res.writeHead(200, { 'content-type': 'application/json' });
          // Hostile but valid JSON: a second metadata after the items wins in JSON.parse.
          res.end(`{"kind":"PodList","metadata":{"continue":"early"},"items":[${JSON.stringify(listedPod('a'))}],"metadata":{"resourceVersion":"5","continue":"late"}}`);
        } else if (token === 'early') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":['); // never ended: must be abandoned
        } else {
          sendJson(res, 200, podList([listedPod('b')], { resourceVersion: '5' }));
        }
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }));
      expect(result.completed).toBe(true);
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
      expect(server.requests.map((r) => r.query.get('continue'))).toContain('late');
    });

    it('falls back to one page after another when the items come before the metadata', async () => {
      server = await startServer((_req, res, seen) => {
        const last = seen.query.get('continue') !== null;
        const metadata = last ? { resourceVersion: '5' } : { resourceVersion: '5', continue: 't1' };
        sendJson(res, 200, { items: [listedPod(last ? 'b' : 'a')], kind: 'PodList', metadata });
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }));
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a'], ['b']]);
      expect(server.requests.map((r) => r.query.get('continue'))).toEqual([null, 't1']);
    });

    it('aborts both the page being read and the one read ahead on unsubscribe', async () => {
      const closed: string[] = [];
      server = await startServer((_req, res, seen) => {
        const token = seen.query.get('continue');
        res.on('close', () => closed.push(token ?? 'first'));
        startPage(res, token === null ? { resourceVersion: '5', continue: 't1' } : { resourceVersion: '5', continue: 't2' }, 'x');
      });
      const subscription = list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }).subscribe();
      await server.request(1);
      subscription.unsubscribe();
      await eventually(() => expect([...closed].sort()).toEqual(['first', 't1']), { timeoutMs: 1_000 });
      expect(closed.sort()).toEqual(['first', 't1']);
      expect(server.requests).toHaveLength(2);
    });

    it('surfaces the error of a page read ahead only when the list reaches it, after the pages before', async () => {
      server = await startServer((_req, res, seen) => {
        if (seen.query.get('continue') === null) sendJson(res, 200, podList([listedPod('a')], { resourceVersion: '5', continue: 't1' }));
        else sendJson(res, 410, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'continue token expired' });
      });
      const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 1 }));
      expect(result.values.map((page) => page.items.map((item) => item.metadata.name))).toEqual([['a']]);
      expect(result.error).toBeInstanceOf(StatusError);
      expect((result.error as StatusError).code).toBe(410);
    });
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

  it('says a JSON array is not a list object with items', async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('[{"metadata":{"name":"x"}}]'));
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods));
    expect((result.error as ProtocolError).message).toBe('the list of /api/v1/pods answered a JSON array, not a list object with items');
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
    await within(second.closed, EVENTUALLY_MS, 'the connection of the request in flight to close');
    expect(pages).toHaveLength(1);
  });
});

describe('list$ of a response decoded as it arrives', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  const names = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const itemsText = (items: readonly string[]): string => items.map((name) => JSON.stringify(listedPod(name))).join(',');
  const small = { afterChars: 1000, batchChars: 500 };

  it('emits a long response as several pages as it arrives, each with the list’s resourceVersion, last only on the final one', async () => {
    const items = names('p', 60);
    let release: () => void = () => undefined;
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[${itemsText(items.slice(0, 40))},`);
      release = () => res.end(`${itemsText(items.slice(40))}]}`);
    });
    const pages: ListPage[] = [];
    let completed = false;
    const done = new Promise<void>((resolve) =>
      list$(kubeConfigFor({ server: server.url }), pods, { limit: 0, incrementalDecoding: small }).subscribe({
        next: (page) => pages.push(page),
        complete: () => {
          completed = true;
          resolve();
        },
      }),
    );
    await eventually(() => expect(pages.length).toBeGreaterThanOrEqual(2), { timeoutMs: 1_000, intervalMs: 5 });
    expect(completed).toBe(false);
    release();
    await within(done, EVENTUALLY_MS, 'the list to complete once its body ends', () => `${pages.length} pages`);
    expect(pages.flatMap((page) => page.items.map((item) => item.metadata.name))).toEqual(items);
    expect(pages.every((page) => page.resourceVersion === '42')).toBe(true);
    expect(pages.map((page) => page.last)).toEqual([...pages.slice(1).map(() => false), true]);
    expect(pages.map((page) => page.itemsSoFar)).toEqual(pages.map((_, i) => pages.slice(0, i + 1).reduce((sum, page) => sum + page.items.length, 0)));
    expect(pages[0]?.items[0]).toMatchObject({ kind: 'Pod', apiVersion: 'v1' });
  });

  it('emits a long page read ahead only after every page before it, holding it paused meanwhile', async () => {
    const first = names('a', 40);
    const second = names('b', 40);
    let endFirst: () => void = () => undefined;
    server = await startServer((_req, res, seen) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (seen.query.get('continue') === null) {
        res.write(`{"kind":"PodList","metadata":{"resourceVersion":"5","continue":"t1"},"items":[${itemsText(first.slice(0, 20))},`);
        endFirst = () => res.end(`${itemsText(first.slice(20))}]}`);
      } else {
        res.end(`{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[${itemsText(second)}]}`);
      }
    });
    const emitted: string[] = [];
    const done = collect(list$(kubeConfigFor({ server: server.url }), pods, { incrementalDecoding: small }));
    const subscriptionSeen = server.request(1);
    await subscriptionSeen;
    await new Promise((resolve) => setTimeout(resolve, 50));
    endFirst();
    const result = await done;
    for (const page of result.values) emitted.push(...page.items.map((item) => item.metadata.name));
    expect(result.completed).toBe(true);
    expect(emitted).toEqual([...first, ...second]);
    expect(result.values.filter((page) => page.last)).toHaveLength(1);
  });

  it('holds the items of a long response whose metadata comes after them, and emits them with its resourceVersion', async () => {
    const items = names('p', 30);
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"items":[${itemsText(items)}],"kind":"PodList","metadata":{"resourceVersion":"9"}}`);
    });
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 0, incrementalDecoding: small }));
    expect(result.values).toHaveLength(1);
    expect(result.values[0]).toMatchObject({ resourceVersion: '9', last: true, itemsSoFar: 30 });
    expect(result.values[0]?.items.map((item) => item.metadata.name)).toEqual(items);
  });

  it.each([
    ['a head naming a kind that is not a list', `{"kind":"Status","metadata":{},"items":[${itemsText(names('p', 30))}]}`, 'not-a-list'],
    ['an item without a name', `{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[${itemsText(names('p', 20))},{"metadata":{}},${itemsText(names('q', 20))}]}`, 'missing-metadata'],
    ['text that stops being JSON', `{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[${itemsText(names('p', 20))} x ${itemsText(names('q', 20))}]}`, 'non-json-body'],
  ])('fails a long response with ProtocolError for %s', async (_name, body, problem) => {
    server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    const result = await collect(list$(kubeConfigFor({ server: server.url }), pods, { limit: 0, incrementalDecoding: small }));
    expect(result.error).toBeInstanceOf(ProtocolError);
    expect((result.error as ProtocolError).problem).toBe(problem);
  });

  it('asks for gzip and decodes a compressed list; with compression off it does not ask', async () => {
    const items = names('p', 50);
    server = await startServer((req, res) => {
      const body = `{"kind":"PodList","metadata":{"resourceVersion":"3"},"items":[${itemsText(items)}]}`;
      if (req.headers['accept-encoding'] === 'gzip') res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync(body));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    const kubeConfig = kubeConfigFor({ server: server.url });
    for (const options of [{ incrementalDecoding: small }, {}, { compression: false }]) {
      const result = await collect(list$(kubeConfig, pods, { limit: 0, ...options }));
      expect(result.values.flatMap((page) => page.items.map((item) => item.metadata.name))).toEqual(items);
    }
    expect(server.requests.map((seen) => seen.headers['accept-encoding'])).toEqual(['gzip', 'gzip', undefined]);
  });

  it('refuses incremental settings that cannot work, at call time', () => {
    expect(() => list$(kubeConfigFor({ server: 'http://127.0.0.1:1' }), pods, { incrementalDecoding: { batchChars: 0 } })).toThrow(RangeError);
  });
});

describe('list$ error excerpts of sensitive resources', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  it('withholds the excerpt of a malformed secrets list by default', async () => {
    const secrets = defineResource({ group: '', version: 'v1', plural: 'secrets', kind: 'Secret', namespaced: true });
    const payload = 'c3VwZXItc2VjcmV0LXBhc3N3b3Jk';
    server = await startServer((_req, res) => sendJson(res, 200, { kind: 'SecretList', metadata: { resourceVersion: '1' }, items: [{ metadata: {}, data: { password: payload } }] }));
    const result = await collect(list$(kubeConfigFor({ server: server.url }), secrets));
    const error = result.error as ProtocolError;
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.problem).toBe('missing-metadata');
    expect(error.excerpt).toBeUndefined();
    expect(error.message).toContain('excerpt withheld: secrets');
    const quoted = await collect(list$(kubeConfigFor({ server: server.url }), secrets, { withholdExcerpts: false }));
    expect((quoted.error as ProtocolError).excerpt).toContain(payload);
  });
});
