import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { pods, type Pod } from '../../lib/resources/builtins';
import { bucketOf, shardSelectorOf } from '../../lib/sharding/buckets';
import { fnv1a64 } from '../../lib/sharding/fnv1a64';
import { StatusError } from '../../lib/base/errors';
import { list$ } from '../../lib/sources/list';
import { watch$ } from '../../lib/sources/watch';
import { parseShardSelector, ShardSelectorError } from '../../apiserver/src/shardSelector';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { createChurn } from '../../apiserver/src/churn';
import { EVENTUALLY_MS, within } from '../support/eventually';

/** KEP-5866's shardSelector on the loopback server, and the sources passing it on, over HTTP. */

const LOWER_HALF = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')";

describe('parseShardSelector (the apiserver pkg/sharding/parser.go subset)', () => {
  it('reads OR-ed ranges and canonicalises them as Selector.String() does', () => {
    const selector = parseShardSelector(" ( shardRange( object.metadata.uid , \"0x0000000000000000\",'0x8000000000000000') )||shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')");
    expect(selector.text).toBe(`${LOWER_HALF} || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')`);
  });

  it('matches by the FNV-1a 64 hash of the field: start inclusive, end exclusive', () => {
    // fnv1a64('') is 0xcbf29ce484222325.
    const object = { metadata: { name: 'a', namespace: '' } };
    expect(parseShardSelector("shardRange(object.metadata.namespace, '0xcbf29ce484222325', '0xcbf29ce484222326')").matches(object)).toBe(true);
    expect(parseShardSelector("shardRange(object.metadata.namespace, '0xcbf29ce484222326', '0x10000000000000000')").matches(object)).toBe(false);
    expect(parseShardSelector("shardRange(object.metadata.namespace, '0x0000000000000000', '0xcbf29ce484222325')").matches(object)).toBe(false);
  });

  it.each([
    ['', 'empty shard selector is not allowed'],
    ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", 'unsupported field path "object.metadata.name"'],
    ["shardRange(object.metadata.uid, '0x00', '0x8000000000000000')", 'must be a 0x-prefixed 16-digit hex value'],
    ["shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')", 'must be less than end'],
    [`${LOWER_HALF} && ${LOWER_HALF}`, 'unsupported function "_&&_"'],
    [`${LOWER_HALF} || shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')`, 'all shard ranges must use the same field'],
    ["shardRange(object.metadata.uid, '0x0000000000000000')", 'requires exactly 3 arguments'],
  ])('refuses %j', (text, message) => {
    expect(() => parseShardSelector(text)).toThrow(ShardSelectorError);
    expect(() => parseShardSelector(text)).toThrow(message);
  });
});

describe('shardSelector over HTTP', () => {
  let server: ApiServer;
  afterEach(() => server.close());

  const seed = (count: number): void => {
    for (let i = 0; i < count; i++) server.store.create(pods, { metadata: { name: `pod-${i}`, namespace: 'default' } });
  };
  const lowerHalf = (pod: Pod): boolean => bucketOf(fnv1a64(pod.metadata.uid!), 2) === 0;

  it('filters a paged list, echoes the selector in metadata.shardInfo, and list$ hands it on', async () => {
    server = await startApiServer();
    seed(40);
    const all = server.store.list(pods);
    const pages = await lastValueFrom(list$(server.kubeConfig, pods, { shardSelector: shardSelectorOf([0], 2, 'object.metadata.uid'), limit: 7 }).pipe(toArray()));
    const items = pages.flatMap((page) => page.items);
    expect(items.length).toBeGreaterThan(0);
    expect(items.map((pod) => pod.metadata.name).sort()).toEqual(all.filter(lowerHalf).map((pod) => pod.metadata.name).sort());
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page.shardInfo).toEqual({ selector: LOWER_HALF });
  });

  it('echoes shardInfo on every batch of a large unpaged list, decoded as it arrives', async () => {
    server = await startApiServer();
    createChurn(server.store, { pods: 1_500, namespaces: 3, seed: 2 }).populate();
    const pages = await lastValueFrom(list$(server.kubeConfig, pods, { shardSelector: LOWER_HALF, limit: 0 }).pipe(toArray()));
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages) expect(page.shardInfo).toEqual({ selector: LOWER_HALF });
    expect(pages.flatMap((page) => page.items).every(lowerHalf)).toBe(true);
  });

  it('filters a watch', async () => {
    server = await startApiServer();
    const rv = server.store.resourceVersion;
    const events = firstValueFrom(watch$(server.kubeConfig, pods, { resourceVersion: rv, shardSelector: LOWER_HALF }).pipe(take(3), toArray()));
    await new Promise((resolve) => setTimeout(resolve, 50));
    seed(30);
    const names = (await within(events, EVENTUALLY_MS, 'the first three watch events in the lower half')).map((event) => event.object.metadata.name);
    const inOrder = server.store.list(pods).sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
    const expected = inOrder.filter(lowerHalf).slice(0, 3).map((pod) => pod.metadata.name);
    expect(names).toEqual(expected);
  });

  it('answers a selector it refuses with 500 "invalid shard selector"', async () => {
    server = await startApiServer();
    const failure = await lastValueFrom(list$(server.kubeConfig, pods, { shardSelector: 'shardRange(object.metadata.uid)' })).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatusError);
    expect((failure as StatusError).code).toBe(500);
    expect((failure as StatusError).message).toContain('invalid shard selector: shardRange() requires exactly 3 arguments');
  });

  it('without the feature, ignores the parameter and echoes nothing', async () => {
    server = await startApiServer({ shardedListAndWatch: false });
    seed(10);
    const page = await lastValueFrom(list$(server.kubeConfig, pods, { shardSelector: LOWER_HALF }));
    expect(page.items).toHaveLength(10);
    expect(page.shardInfo).toBeUndefined();
  });
});
