import { configMaps, namespaces, pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { get } from './httpHelpers';

/**
 * Lists over real HTTP: PROTOCOL.md B.2–B.4 and B.8, as the server answers without a
 * `serverVersion` (the newest version's answers; it also pages a list at "0", which no version's
 * watch cache does). What differs by version is in serverVersions.spec.ts.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer({ continueTtlMs: 60_000, watchCacheWaitMs: 0 });
});

afterEach(async () => {
  await server.close();
});

function seed(count: number, namespace = 'ns'): void {
  for (let i = 0; i < count; i++) {
    server.store.create(pods, { metadata: { name: `pod-${String(i).padStart(3, '0')}`, namespace, labels: { app: i % 2 === 0 ? 'even' : 'odd' } } });
  }
}

const names = (items: { metadata: { name: string } }[]): string[] => items.map((item) => item.metadata.name);

describe('list', () => {
  it('returns a <Kind>List with apiVersion, the current resourceVersion, and items carrying kind and apiVersion', async () => {
    seed(2);
    const reply = await get(server, '/api/v1/namespaces/ns/pods');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.json.kind).toBe('PodList');
    expect(reply.json.apiVersion).toBe('v1');
    expect(reply.json.metadata).toEqual({ resourceVersion: server.store.resourceVersion });
    expect(reply.json.items.map((item: { kind: string; apiVersion: string }) => [item.kind, item.apiVersion])).toEqual([
      ['Pod', 'v1'],
      ['Pod', 'v1'],
    ]);
  });

  it('lists one namespace at the namespaced path and every namespace at the cluster path, sorted by namespace then name', async () => {
    server.store.create(pods, { metadata: { name: 'b', namespace: 'two' } });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'two' } });
    server.store.create(pods, { metadata: { name: 'z', namespace: 'one' } });
    expect(names((await get(server, '/api/v1/namespaces/two/pods')).json.items)).toEqual(['a', 'b']);
    expect(names((await get(server, '/api/v1/pods')).json.items)).toEqual(['z', 'a', 'b']);
  });

  it('serves cluster-scoped, apps and custom resources with their list kinds', async () => {
    server.store.create(namespaces, { metadata: { name: 'ns1' } });
    expect((await get(server, '/api/v1/namespaces')).json.kind).toBe('NamespaceList');
    const deployments = await get(server, '/apis/apps/v1/namespaces/ns/deployments');
    expect([deployments.json.kind, deployments.json.apiVersion]).toEqual(['DeploymentList', 'apps/v1']);
    const widgets = await get(server, '/apis/example.com/v1/widgets');
    expect([widgets.json.kind, widgets.json.apiVersion]).toEqual(['WidgetList', 'example.com/v1']);
  });

  it('applies label selectors, including set-based ones', async () => {
    seed(4);
    expect(names((await get(server, '/api/v1/pods?labelSelector=app%3Deven')).json.items)).toEqual(['pod-000', 'pod-002']);
    expect(names((await get(server, '/api/v1/pods?labelSelector=app%20in%20(odd)')).json.items)).toEqual(['pod-001', 'pod-003']);
  });

  it('applies metadata.name and metadata.namespace field selectors', async () => {
    seed(3, 'a');
    seed(1, 'b');
    expect(names((await get(server, '/api/v1/pods?fieldSelector=metadata.name%3Dpod-001')).json.items)).toEqual(['pod-001']);
    expect((await get(server, '/api/v1/pods?fieldSelector=metadata.namespace%3Db')).json.items).toHaveLength(1);
    expect((await get(server, '/api/v1/pods?fieldSelector=metadata.namespace!%3Db')).json.items).toHaveLength(3);
  });

  describe('paging', () => {
    it('pages with limit and continue at one resourceVersion, with remainingItemCount except on the last page', async () => {
      seed(5);
      const first = await get(server, '/api/v1/namespaces/ns/pods?limit=2');
      expect(names(first.json.items)).toEqual(['pod-000', 'pod-001']);
      expect(first.json.metadata.remainingItemCount).toBe(3);
      const rv = first.json.metadata.resourceVersion;

      // Changes between pages must not show: every page is cut from the first page's snapshot.
      server.store.delete(pods, 'ns', 'pod-003');
      server.store.create(pods, { metadata: { name: 'pod-0025', namespace: 'ns' } });
      server.store.update(pods, { metadata: { name: 'pod-004', namespace: 'ns', labels: { changed: 'yes' } } });

      const second = await get(server, `/api/v1/namespaces/ns/pods?limit=2&continue=${encodeURIComponent(first.json.metadata.continue)}`);
      expect(names(second.json.items)).toEqual(['pod-002', 'pod-003']);
      expect(second.json.metadata.resourceVersion).toBe(rv);
      expect(second.json.metadata.remainingItemCount).toBe(1);
      const third = await get(server, `/api/v1/namespaces/ns/pods?limit=2&continue=${encodeURIComponent(second.json.metadata.continue)}`);
      expect(names(third.json.items)).toEqual(['pod-004']);
      expect(third.json.items[0].metadata.labels).toEqual({ app: 'even' });
      expect(third.json.metadata).toEqual({ resourceVersion: rv });
    });

    it('rebuilds a dropped snapshot from history so later pages stay consistent', async () => {
      seed(4);
      const first = await get(server, '/api/v1/pods?limit=2');
      server.store.delete(pods, 'ns', 'pod-002');
      // A token for another query shape (a selector) has no kept snapshot: it is rebuilt at the token's rv.
      const second = await get(server, `/api/v1/pods?limit=2&labelSelector=app&continue=${first.json.metadata.continue}`);
      expect(names(second.json.items)).toEqual(['pod-002', 'pod-003']);
    });

    it('leaves remainingItemCount out when a selector is used', async () => {
      seed(6);
      const first = await get(server, '/api/v1/pods?limit=1&labelSelector=app%3Deven');
      expect(first.json.metadata.continue).toEqual(expect.any(String));
      expect(first.json.metadata.remainingItemCount).toBeUndefined();
    });

    it('encodes the continue token as base64url JSON with the list rv and next key', async () => {
      seed(3);
      const first = await get(server, '/api/v1/pods?limit=1');
      const token = JSON.parse(Buffer.from(first.json.metadata.continue, 'base64url').toString('utf8'));
      expect(token).toMatchObject({ v: 'meta.k8s.io/v1', rv: Number(first.json.metadata.resourceVersion), start: 'ns/pod-000\u0000' });
    });

    it('accepts continue with resourceVersion "0" as a continue token read', async () => {
      seed(3);
      const first = await get(server, '/api/v1/pods?limit=2');
      const second = await get(server, `/api/v1/pods?limit=2&resourceVersion=0&continue=${first.json.metadata.continue}`);
      expect(names(second.json.items)).toEqual(['pod-002']);
    });
  });

  describe('resourceVersion semantics', () => {
    it('serves the current state for resourceVersion unset, "0" and NotOlderThan', async () => {
      seed(2);
      const rv = server.store.resourceVersion;
      for (const query of ['', '?resourceVersion=0', '?resourceVersion=2', '?resourceVersion=2&resourceVersionMatch=NotOlderThan']) {
        const reply = await get(server, `/api/v1/pods${query}`);
        expect([query, reply.json.metadata.resourceVersion, reply.json.items.length]).toEqual([query, rv, 2]);
      }
    });

    it('serves the state at an exact resourceVersion from history (resourceVersionMatch=Exact, or limit with a resourceVersion)', async () => {
      seed(2);
      const before = server.store.resourceVersion;
      server.store.delete(pods, 'ns', 'pod-000');
      server.store.create(pods, { metadata: { name: 'pod-new', namespace: 'ns' } });
      server.store.update(pods, { metadata: { name: 'pod-001', namespace: 'ns', labels: { v: '2' } } });
      const exact = await get(server, `/api/v1/pods?resourceVersion=${before}&resourceVersionMatch=Exact`);
      expect(exact.json.metadata.resourceVersion).toBe(before);
      expect(names(exact.json.items)).toEqual(['pod-000', 'pod-001']);
      expect(exact.json.items[1].metadata.labels).toEqual({ app: 'odd' });
      const paged = await get(server, `/api/v1/pods?resourceVersion=${before}&limit=10`);
      expect(names(paged.json.items)).toEqual(['pod-000', 'pod-001']);
    });

    it('answers 410 Expired for an exact resourceVersion older than history', async () => {
      seed(2);
      const old = server.store.resourceVersion;
      server.store.create(configMaps, { metadata: { name: 'c', namespace: 'ns' } });
      server.store.create(pods, { metadata: { name: 'later', namespace: 'ns' } });
      server.store.compact();
      const reply = await get(server, `/api/v1/pods?resourceVersion=${old}&resourceVersionMatch=Exact`);
      expect(reply.status).toBe(410);
      expect(reply.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'The resourceVersion for the provided list is too old.',
        reason: 'Expired',
        code: 410,
      });
    });

    it('answers 504 "Too large resource version" for a resourceVersion the server has not reached', async () => {
      const current = Number(server.store.resourceVersion);
      const reply = await get(server, `/api/v1/pods?resourceVersion=${current + 10}`);
      expect(reply.status).toBe(504);
      expect(reply.json.reason).toBe('Timeout');
      expect(reply.json.message).toBe(`Timeout: Too large resource version: ${current + 10}, current: ${current}`);
      expect(reply.json.details.causes).toEqual([{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
      expect(reply.headers['retry-after']).toBe('1');
    });
  });

  describe('continue expiry', () => {
    const expiredStatus = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      reason: 'Expired',
      code: 410,
    };

    it('answers 410 Expired to every token issued before expireContinueTokens()', async () => {
      seed(3);
      const first = await get(server, '/api/v1/pods?limit=1');
      server.faults.expireContinueTokens();
      const reply = await get(server, `/api/v1/pods?limit=1&continue=${first.json.metadata.continue}`);
      expect(reply.status).toBe(410);
      expect(reply.json).toEqual(expiredStatus);
      const fresh = await get(server, '/api/v1/pods?limit=1');
      expect((await get(server, `/api/v1/pods?limit=1&continue=${fresh.json.metadata.continue}`)).status).toBe(200);
    });

    it('answers 410 Expired to a token older than continueTtlMs', async () => {
      seed(3);
      const first = await get(server, '/api/v1/pods?limit=1');
      const issued = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(issued + 59_000);
      try {
        expect((await get(server, `/api/v1/pods?limit=1&continue=${first.json.metadata.continue}`)).status).toBe(200);
        clock.mockReturnValue(issued + 61_000);
        const reply = await get(server, `/api/v1/pods?limit=1&continue=${first.json.metadata.continue}`);
        expect(reply.json).toEqual(expiredStatus);
      } finally {
        clock.mockRestore();
      }
    });

    it('answers 410 with a token that continues at the latest version once etcd has compacted the token\'s version', async () => {
      seed(3);
      const first = await get(server, '/api/v1/pods?limit=1');
      server.store.create(pods, { metadata: { name: 'x', namespace: 'ns' } });
      server.store.compact({ keepWatchCache: true });
      const reply = await get(server, `/api/v1/pods?limit=1&continue=${first.json.metadata.continue}`);
      expect(reply.status).toBe(410);
      expect(reply.json).toEqual({
        ...expiredStatus,
        metadata: { continue: expect.any(String) },
        message:
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
          'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
          'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      });
      const token = JSON.parse(Buffer.from(reply.json.metadata.continue, 'base64url').toString('utf8'));
      expect(token).toMatchObject({ v: 'meta.k8s.io/v1', rv: -1, start: 'ns/pod-000\u0000' });
      // The new token goes on after the same key, in the current state.
      const rest = await get(server, `/api/v1/pods?limit=10&continue=${reply.json.metadata.continue}`);
      expect(names(rest.json.items)).toEqual(['pod-001', 'pod-002', 'x']);
      expect(rest.json.metadata.resourceVersion).toBe(server.store.resourceVersion);
    });
  });
});
