import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { get, openWatch } from './httpHelpers';

/**
 * Query values read as the API server's parameter codec reads them (apimachinery
 * `runtime/conversion.go`): booleans are false only for "0" and "false" in any case, integers go
 * through Go's `strconv.ParseInt`.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer({ serverVersion: '1.36', bookmarkIntervalMs: 0 });
  for (const name of ['a', 'b', 'c']) server.store.create(pods, { metadata: { name, namespace: 'ns' } });
});

afterEach(() => server.close());

/** Whether the server answered a watch (a stream of events) or a list. */
async function answeredAs(query: string): Promise<'watch' | 'list'> {
  const stream = await openWatch(server, `/api/v1/namespaces/ns/pods?${query}`);
  // A watch event ends with a newline; a list is one JSON document without one.
  await stream.until((s) => s.lines.length > 0 || s.outcome !== 'open', 'a first watch line or the end of the body');
  stream.close();
  const first = JSON.parse(stream.lines[0] ?? stream.raw) as { kind?: string; type?: string };
  if (first.type === 'ADDED') return 'watch';
  if (first.kind === 'PodList') return 'list';
  throw new Error(`neither a watch nor a list: ${stream.raw}`);
}

describe('booleans', () => {
  it.each(['watch=true', 'watch=1', 'watch=True', 'watch=TRUE', 'watch=t', 'watch=yes', 'watch=', 'watch'])('%s is a watch', async (query) => {
    expect(await answeredAs(query)).toBe('watch');
    expect(server.requests.entries.at(-1)?.verb).toBe('watch');
  });

  it.each(['watch=false', 'watch=0', 'watch=False', 'watch=FALSE', 'watch=fAlSe'])('%s is a list', async (query) => {
    expect(await answeredAs(query)).toBe('list');
    expect(server.requests.entries.at(-1)?.verb).toBe('list');
  });

  it('reads allowWatchBookmarks=True and sendInitialEvents=True as true, never answering 400', async () => {
    const stream = await openWatch(server, '/api/v1/namespaces/ns/pods?watch=True&sendInitialEvents=True&allowWatchBookmarks=True&resourceVersionMatch=NotOlderThan&resourceVersion=');
    await stream.untilLines(4);
    expect(stream.events.map((event) => event.type)).toEqual(['ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    stream.close();
  });

  it('reads sendInitialEvents=False as false: no state, only what happens next', async () => {
    const stream = await openWatch(server, '/api/v1/namespaces/ns/pods?watch=1&sendInitialEvents=False&resourceVersionMatch=NotOlderThan&resourceVersion=0');
    server.store.create(pods, { metadata: { name: 'd', namespace: 'ns' } });
    await stream.untilLines(1);
    expect(stream.events.map((event) => `${event.type} ${event.object.metadata.name}`)).toEqual(['ADDED d']);
    stream.close();
  });
});

describe('integers', () => {
  it.each([
    ['limit=many', 'strconv.ParseInt: parsing "many": invalid syntax'],
    ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
    ['limit=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
    ['watch=1&timeoutSeconds=soon', 'strconv.ParseInt: parsing "soon": invalid syntax'],
  ])('%s is a 400 with strconv.ParseInt\'s message', async (query, message) => {
    const reply = await get(server, `/api/v1/namespaces/ns/pods?${query}`);
    expect([reply.status, reply.json.reason, reply.json.message]).toEqual([400, 'BadRequest', message]);
  });

  it('reads a signed limit; a negative one is no limit', async () => {
    expect((await get(server, '/api/v1/namespaces/ns/pods?limit=%2B2')).json.items).toHaveLength(2);
    const unlimited = await get(server, '/api/v1/namespaces/ns/pods?limit=-1');
    expect([unlimited.json.items.length, unlimited.json.metadata.continue]).toEqual([3, undefined]);
  });

  it('ends a watch with a negative timeoutSeconds at once', async () => {
    const stream = await openWatch(server, '/api/v1/namespaces/ns/pods?watch=1&resourceVersion=1&timeoutSeconds=-1');
    await stream.untilClosed();
    expect([stream.status, stream.outcome]).toEqual([200, 'end']);
  });
});
