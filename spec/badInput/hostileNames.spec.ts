import { labelIndex, namespaceIndex } from '../../lib/store/indexers';
import { contents, openWatch, pod, runInformer, sendList, startRawApiServer, type RawApiServer, type RunningInformer } from './rawApiServer';

/** Names and values that break code using plain objects as maps, or assuming short ASCII. */
const LONG_UNICODE = 'ünïcødé-名前-🚀'.repeat(400);
const hostile = [
  pod('__proto__', '1', { namespace: 'constructor', labels: { app: '__proto__', toString: 'constructor' } }),
  pod('constructor', '2', { namespace: '__proto__', labels: { app: 'constructor', ['__proto__']: 'polluted' } }),
  pod('hasOwnProperty', '3', { labels: { app: 'valueOf' } }),
  pod(LONG_UNICODE, '4', { labels: { app: LONG_UNICODE } }),
];

describe('bad input: hostile names and label values (__proto__, constructor, long unicode)', () => {
  let server: RawApiServer | undefined;
  let running: RunningInformer | undefined;
  afterEach(async () => {
    running?.stop();
    await server?.close();
  });

  it('caches them as plain data under their keys, indexes them, and pollutes no prototype', async () => {
    server = await startRawApiServer({
      // The list carries a label map whose own key is "__proto__": JSON.parse keeps it as data.
      list: (_request, response) => sendList(response, hostile, '4'),
      watch: (request, response) => {
        const watch = openWatch(response);
        if (request.index === 0) {
          watch.line('{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"toString","namespace":"default","resourceVersion":"5","labels":{"__proto__":{"polluted":"yes"},"app":"__proto__"}}}}');
          watch.event('MODIFIED', pod('__proto__', '6', { namespace: 'constructor', labels: { app: 'constructor' } }));
          watch.event('DELETED', pod('constructor', '7', { namespace: '__proto__' }));
        }
      },
    });
    running = runInformer(server.kubeConfig, { indexers: { namespace: namespaceIndex, app: labelIndex('app') } });
    const snapshot = await running.snapshotWhere((s) => s.has('default/toString') && !s.has('__proto__/constructor'));

    expect(contents(snapshot)).toEqual({
      'constructor/__proto__': '6',
      'default/hasOwnProperty': '3',
      [`default/${LONG_UNICODE}`]: '4',
      'default/toString': '5',
    });
    expect(snapshot.get('constructor/__proto__')?.metadata.name).toBe('__proto__');
    expect(snapshot.get('__proto__')).toBeUndefined();
    expect(snapshot.get('constructor')).toBeUndefined();
    expect(snapshot.byIndex('namespace', 'constructor').map((p) => p.metadata.name)).toEqual(['__proto__']);
    expect(snapshot.indexKeys('app', '__proto__')).toEqual(['default/toString']);
    expect(snapshot.indexKeys('app', 'constructor')).toEqual(['constructor/__proto__']);
    expect(snapshot.indexKeys('app', LONG_UNICODE)).toEqual([`default/${LONG_UNICODE}`]);
    expect(snapshot.list({ labelSelector: 'app=valueOf' }).map((p) => p.metadata.name)).toEqual(['hasOwnProperty']);
    expect(snapshot.list({ namespace: '__proto__' })).toEqual([]);
    // Nothing leaked into the prototypes every object shares.
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
    expect(typeof ({} as { toString: unknown }).toString).toBe('function');
    expect(running.healths.filter((health) => health.lastError !== undefined)).toEqual([]);
    expect(running.streamError()).toBeUndefined();
  });
});
