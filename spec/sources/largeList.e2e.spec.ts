import { filter, firstValueFrom, toArray, takeWhile } from 'rxjs';
import { informer } from '../../lib/informer/informer';
import { pods, type Pod } from '../../lib/resources/builtins';
import type { ReplaceDelta } from '../../lib/reflector/delta';
import { list$ } from '../../lib/sources/list';
import { createChurn, NEWEST_SERVER_VERSION, OLDEST_SERVER_VERSION, startApiServer, type ApiServer } from '../../apiserver/src';
import { EVENTUALLY_MS, within } from '../support/eventually';

/**
 * The informer's first list (`limit=500&resourceVersion=0`) answered whole, in one long response,
 * as every real API server's watch cache answers it (the loopback server's version profiles),
 * gzip-compressed or not, through `list$` and through `informer()`.
 */
describe.each([OLDEST_SERVER_VERSION, NEWEST_SERVER_VERSION])('a first list answered whole by a %s server', (serverVersion) => {
  let server: ApiServer;
  const count = 1200; // ~5.3 MB of pods with managedFields: past the 3 MiB threshold
  beforeAll(async () => {
    server = await startApiServer({ serverVersion });
    createChurn(server.store, { pods: count, namespaces: 3, seed: 5, managedFields: true }).populate();
  });
  afterAll(async () => {
    await server.close();
  });

  it('arrives through list$ in pages of about a batch, every one at the list’s resourceVersion, equal to the server’s list', async () => {
    const pages = await within(firstValueFrom(list$(server.kubeConfig, pods, { resourceVersion: '0' }).pipe(toArray())), EVENTUALLY_MS, 'list$ to complete with every page');
    expect(server.requests.entries.at(-1)?.query).toEqual({ limit: '500', resourceVersion: '0' });
    expect(pages.length).toBeGreaterThan(3);
    expect(new Set(pages.map((page) => page.resourceVersion))).toEqual(new Set([server.store.resourceVersion]));
    expect(pages.filter((page) => page.last)).toEqual([pages.at(-1)]);
    // Compared as text: jest's deep equality takes seconds over 5 MB of objects.
    expect(JSON.stringify(pages.flatMap((page) => page.items)) === JSON.stringify(server.store.list(pods))).toBe(true);
  });

  it.each([true, false])('syncs an informer listing (compression %s): Replace pages fill the new store, swapped in at the last one', async (compression) => {
    const podInformer = informer(server.kubeConfig, pods, { compression, streamingList: false });
    const replaces = firstValueFrom(
      podInformer.deltas$.pipe(
        filter((delta): delta is ReplaceDelta<Pod> => delta.type === 'Replace'),
        takeWhile((delta) => !delta.last, true),
        toArray(),
      ),
    );
    const snapshot = await within(firstValueFrom(podInformer.synced$), EVENTUALLY_MS, 'the informer’s first synced snapshot');
    const pagesSeen = await within(replaces, EVENTUALLY_MS, 'the Replace deltas up to the last page');
    expect(snapshot.size).toBe(count);
    expect(pagesSeen.length).toBeGreaterThan(3);
    expect(pagesSeen.map((page) => [page.first, page.last])).toEqual(pagesSeen.map((_, i) => [i === 0, i === pagesSeen.length - 1]));
  });
});
