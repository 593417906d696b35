import { filter, firstValueFrom, toArray, takeWhile } from 'rxjs';
import { informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { ReplaceDelta } from '../../lib/reflector/delta';
import { list$ } from '../../lib/sources/list';
import { createChurn, startApiServer, type ApiServer } from '../../lib/testing';

/**
 * A list far longer than the incremental threshold, in one response, from the loopback API server
 * (a list without `limit` is answered whole, as an API server before 1.34 answers the informer's
 * first list from its watch cache), through `list$` and through `informer()`.
 */
describe('a list answered in one long response', () => {
  let server: ApiServer;
  const count = 1200; // ~5.3 MB of pods with managedFields: past the 4 MiB threshold
  beforeAll(async () => {
    server = await startApiServer();
    createChurn(server.store, { pods: count, namespaces: 3, seed: 5, managedFields: true }).populate();
  });
  afterAll(async () => {
    await server.close();
  });

  it('arrives through list$ in pages of about a batch, every one at the list’s resourceVersion, equal to the server’s list', async () => {
    const pages = await firstValueFrom(list$(server.kubeConfig, pods, { limit: 0 }).pipe(toArray()));
    expect(pages.length).toBeGreaterThan(3);
    expect(new Set(pages.map((page) => page.resourceVersion))).toEqual(new Set([server.store.resourceVersion]));
    expect(pages.filter((page) => page.last)).toEqual([pages.at(-1)]);
    const listed = pages.flatMap((page) => page.items);
    // Compared as text: jest's deep equality takes seconds over 5 MB of objects.
    expect(JSON.stringify(listed) === JSON.stringify(server.store.list(pods))).toBe(true);
  });

  it('syncs an informer: Replace pages fill the new store, which is swapped in at the last one', async () => {
    const podInformer = informer(server.kubeConfig, pods, { pageSize: 0 });
    const replaces = firstValueFrom(
      podInformer.deltas$.pipe(
        filter((delta): delta is ReplaceDelta<Pod> => delta.type === 'Replace'),
        takeWhile((delta) => !delta.last, true),
        toArray(),
      ),
    );
    const snapshot = await firstValueFrom(podInformer.synced$);
    const pagesSeen = await replaces;
    expect(snapshot.size).toBe(count);
    expect(pagesSeen.length).toBeGreaterThan(3);
    expect(pagesSeen.map((page) => [page.first, page.last])).toEqual(pagesSeen.map((_, i) => [i === 0, i === pagesSeen.length - 1]));
    expect(server.requests.entries.filter((entry) => entry.verb === 'list').map((entry) => entry.query['limit'])).toEqual([undefined, undefined]);
  });
});
