import { collect, kubeConfigFor, sendJson, startServer, type TestServer } from './support';
import { metadataListerWatcher } from '../../lib/sources/metadataListerWatcher';
import { METADATA_ACCEPT, METADATA_LIST_ACCEPT } from '../../lib/sources/partialObjectMetadata';
import { pods } from '../../lib/resources/builtins';
import { StatusError } from '../../lib/base/errors';

/** What a metadata-only lister-watcher asks for and what it makes of every answer, against canned HTTP servers. */

const managedFields = [{ manager: 'm', operation: 'Apply' }];
const metadataOf = (name: string, rv: string) => ({ name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, labels: { app: 'web' }, managedFields });
const lean = (name: string, rv: string) => {
  const { managedFields: _dropped, ...metadata } = metadataOf(name, rv);
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata };
};
const converted = (name: string, rv: string) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: metadataOf(name, rv) });
// A list's items carry no kind or apiVersion on the wire; watch objects do.
const wholeItem = (name: string, rv: string) => ({ metadata: metadataOf(name, rv), spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
const wholeObject = (name: string, rv: string) => ({ kind: 'Pod', apiVersion: 'v1', ...wholeItem(name, rv) });

/** A server that answers as a converting API server does (`converts`), or with whole objects. */
function cannedServer(converts: boolean): Promise<TestServer> {
  return startServer((_req, res, seen) => {
    if (seen.query.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const object = converts ? converted('a', '9') : wholeObject('a', '9');
      const bookmark = converts
        ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } }
        : { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } };
      res.end(`${JSON.stringify({ type: 'MODIFIED', object })}\n${JSON.stringify({ type: 'BOOKMARK', object: bookmark })}\n`);
      return;
    }
    const page = seen.query.get('continue') === null ? 1 : 2;
    const items = page === 1 ? [converts ? converted('a', '3') : wholeItem('a', '3')] : [converts ? converted('b', '4') : wholeItem('b', '4')];
    const metadata = page === 1 ? { resourceVersion: '7', continue: 'next', remainingItemCount: 1 } : { resourceVersion: '7' };
    sendJson(res, 200, converts ? { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata, items } : { kind: 'PodList', apiVersion: 'v1', metadata, items });
  });
}

describe('metadataListerWatcher', () => {
  let server: TestServer;
  afterEach(async () => {
    await server.close();
  });

  it('asks for PartialObjectMetadataList on every list page and PartialObjectMetadata on watches, streaming lists included', async () => {
    server = await cannedServer(true);
    const lw = metadataListerWatcher(kubeConfigFor({ server: server.url }), pods, { namespace: 'ns' });
    await collect(lw.list({ limit: 1 }));
    await collect(lw.watch({ resourceVersion: '7' }));
    await collect(lw.watch({ sendInitialEvents: true, allowWatchBookmarks: true }));
    expect(server.requests.map((r) => [r.query.get('continue') ?? r.query.get('watch'), r.headers.accept])).toEqual([
      [null, METADATA_LIST_ACCEPT],
      ['next', METADATA_LIST_ACCEPT],
      ['true', METADATA_ACCEPT],
      ['true', METADATA_ACCEPT],
    ]);
    expect(METADATA_LIST_ACCEPT).toBe('application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json');
    expect(METADATA_ACCEPT).toBe('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json');
  });

  it.each([
    ['a converting server', true],
    ['a server that answers whole objects', false],
  ])('gives the same pages and events from %s: PartialObjectMetadata without managedFields', async (_name, converts) => {
    server = await cannedServer(converts);
    const lw = metadataListerWatcher(kubeConfigFor({ server: server.url }), pods);
    const listed = await collect(lw.list({ limit: 1 }));
    expect(listed.values.map((page) => ({ items: page.items, resourceVersion: page.resourceVersion, last: page.last }))).toEqual([
      { items: [lean('a', '3')], resourceVersion: '7', last: false },
      { items: [lean('b', '4')], resourceVersion: '7', last: true },
    ]);
    const watched = await collect(lw.watch({ resourceVersion: '7' }));
    expect(watched.values).toEqual([
      { type: 'MODIFIED', object: lean('a', '9') },
      { type: 'BOOKMARK', object: { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { resourceVersion: '10', annotations: { 'k8s.io/initial-events-end': 'true' } } } },
    ]);
  });

  it('keeps managedFields when asked to', async () => {
    server = await cannedServer(true);
    const lw = metadataListerWatcher(kubeConfigFor({ server: server.url }), pods, {}, { keepManagedFields: true });
    const listed = await collect(lw.list({ limit: 1 }));
    expect(listed.values[0]!.items[0]!.metadata.managedFields).toEqual(managedFields);
  });

  it('fails with a StatusError 406 NotAcceptable when the server refuses the conversion', async () => {
    const message = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';
    server = await startServer((_req, res) => sendJson(res, 406, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'NotAcceptable', code: 406 }));
    const lw = metadataListerWatcher(kubeConfigFor({ server: server.url }), pods);
    const { error } = await collect(lw.list({}));
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ code: 406, reason: 'NotAcceptable' });
    expect((error as StatusError).message).toContain(message);
  });
});
