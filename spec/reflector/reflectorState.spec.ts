import { defaultBackoffConfig } from '../../lib/reflector/backoff';
import { initialContext, listRequest, phaseOf, relistRequest, step } from '../../lib/reflector/reflectorState';
import type { ListRequest, ReflectorContext, ReflectorInput, ReflectorRequest, ReflectorState, ReflectorTransition } from '../../lib/reflector/reflectorState';
import { IdleTimeoutError, NetworkError, ProtocolError } from '../../lib/base/errors';
import type { InformerError } from '../../lib/base/errors';
import { connectionRefused, expired, statusError } from './reflectHarness';

/** random 0: every backoff wait is its base delay (the low end of [d, 2d)). */
const env = { now: 1000, random: () => 0, backoff: defaultBackoffConfig };
const watching: ReflectorState = { name: 'watching', request: { kind: 'watch', resourceVersion: '10' } };
const synced: ReflectorContext = { ...initialContext(false), resourceVersion: '10' };
const streamingSynced: ReflectorContext = { ...initialContext(true), resourceVersion: '10' };
const tooLarge = (): InformerError =>
  statusError(504, 'Timeout', { message: 'Timeout: Too large resource version: 15, current: 12', causeReason: 'ResourceVersionTooLarge' });

const list = (resourceVersion: string, extra: Partial<ListRequest> = {}): ListRequest => ({ kind: 'list', resourceVersion, paged: true, immediateRetry: false, ...extra });
const listing = (request: ListRequest, paginated = false): ReflectorState => ({ name: 'listing', request, paginated });
const streamingList = (resourceVersion: string): ReflectorState => ({ name: 'streamingList', request: { kind: 'streamingList', resourceVersion } });
const failed = (error: InformerError, resourceVersion = '10'): ReflectorInput => ({ type: 'failed', error, resourceVersion });

/** Feeds the inputs one after the other from `state`. */
function after(state: ReflectorState, context: ReflectorContext, ...inputs: ReflectorInput[]): ReflectorTransition {
  let transition: ReflectorTransition = { state, context, effect: { kind: 'continue' }, log: undefined };
  for (const input of inputs) transition = step(transition.state, transition.context, input, env);
  return transition;
}

/** The request a transition opens, at once or after its backoff. */
function nextRequest(transition: ReflectorTransition): { at: 'once' | number; request: ReflectorRequest } {
  if (transition.effect.kind === 'open') return { at: 'once', request: transition.effect.request };
  if (transition.state.name === 'backingOff') return { at: transition.state.delayMs, request: transition.state.next };
  throw new Error(`no request follows ${JSON.stringify(transition.effect)}`);
}

describe('reflectorState.step: the first list and the watch', () => {
  it('starts with a paged list at "0", or a streaming list at "" when streaming', () => {
    expect(step({ name: 'idle' }, initialContext(false), { type: 'start' }, env).effect).toEqual({ kind: 'open', request: list('0') });
    expect(step({ name: 'idle' }, initialContext(true), { type: 'start' }, env).effect).toEqual({ kind: 'open', request: { kind: 'streamingList', resourceVersion: '' } });
  });

  it('watches from the list resourceVersion once the list is complete, clearing failures', () => {
    const failing = { ...initialContext(false), failures: 3, lastError: connectionRefused() };
    const t = step(listing(list('0')), failing, { type: 'listed', resourceVersion: '42' }, env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '42' } });
    expect(t.context).toMatchObject({ resourceVersion: '42', failures: 0, lastError: undefined });
  });

  it('keeps the stream open when a streaming list reaches its bookmark', () => {
    const t = step(streamingList(''), initialContext(true), { type: 'initialEventsEnd', resourceVersion: '7' }, env);
    expect(t.effect).toEqual({ kind: 'continue' });
    expect(phaseOf(t.state)).toBe('watching');
    expect(t.context.resourceVersion).toBe('7');
  });

  it('takes the last observed resourceVersion from the input that ends a request', () => {
    const t = step(watching, synced, { type: 'closed', resourceVersion: '15', events: 3, durationMs: 5000 }, env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '15' } });
  });

  it('re-watches at once after an idle timeout, counting it as a failure without consuming backoff', () => {
    const t = step(watching, synced, failed(new IdleTimeoutError(604_000)), env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '10' } });
    expect(t.context).toMatchObject({ failures: 1, backoff: synced.backoff });
    expect(t.log?.level).toBe('warn');
  });
});

describe('reflectorState.step: relists (client-go reflector.go list() and pager.go)', () => {
  it('relists after a watch 410, after a backoff, at the last resourceVersion and unpaged, so the watch cache answers "not older than"', () => {
    const t = step(watching, synced, failed(expired(), '15'), env);
    expect(nextRequest(t)).toEqual({ at: 800, request: list('15', { paged: false }) });
  });

  it('keeps paging relists when the first list at "0" came back in pages, asking NotOlderThan so that limit does not make it an Exact read', () => {
    const paged = after(listing(list('0')), initialContext(false), { type: 'listPage' }, { type: 'listed', resourceVersion: '10' });
    expect(paged.context.paginatedResult).toBe(true);
    expect(nextRequest(step(paged.state, paged.context, failed(expired(), '15'), env)).request).toEqual(
      list('15', { paged: true, resourceVersionMatch: 'NotOlderThan' }),
    );
  });

  it('decides paging from the first list only: a relist at "" that came back in pages does not switch it on', () => {
    const t = after(listing(list('')), synced, { type: 'listPage' }, { type: 'listed', resourceVersion: '20' });
    expect(t.context.paginatedResult).toBe(false);
    expect(relistRequest(t.context)).toEqual(list('20', { paged: false }));
  });

  it.each([
    ['a 410', expired()],
    ['a "too large resource version"', tooLarge()],
  ])('lists at "" at once, without backing off, after %s on a list at the last version', (_label, error) => {
    const t = step(listing(list('15', { paged: false })), synced, failed(error, '15'), env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('', { immediateRetry: true }) });
    expect(t.context).toMatchObject({ resourceVersionUnavailable: true, failures: 1, lastError: error });
  });

  it('lists at "" at once after a 410 on the very first list too', () => {
    expect(nextRequest(step(listing(list('0')), initialContext(false), failed(expired(), ''), env))).toEqual({ at: 'once', request: list('', { immediateRetry: true }) });
  });

  it('backs off when the immediate list at "" fails as well, then lists at "" until a list succeeds, and at the new version after that', () => {
    const consistent = after(listing(list('15', { paged: false })), synced, failed(expired(), '15'), failed(expired(), '15'));
    expect(nextRequest(consistent)).toEqual({ at: 800, request: list('') });
    const back = after(consistent.state, consistent.context, { type: 'retry' }, { type: 'listed', resourceVersion: '30' });
    expect(back.context.resourceVersionUnavailable).toBe(false);
    expect(relistRequest(back.context)).toEqual(list('30', { paged: false }));
  });

  it('lists once more, unpaged and at once, at the same version when a continue token expires (the pager fallback)', () => {
    const t = after(listing(list('0')), initialContext(false), { type: 'listPage' }, failed(expired(), ''));
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('0', { paged: false }) });
  });

  it('keeps the match of a paged relist in its pager fallback, and goes to "" at once if that 410s too', () => {
    const paged = list('15', { resourceVersionMatch: 'NotOlderThan' });
    const fallback = after(listing(paged), synced, { type: 'listPage' }, failed(expired(), '15'));
    expect(nextRequest(fallback)).toEqual({ at: 'once', request: { ...paged, paged: false } });
    expect(nextRequest(step(fallback.state, fallback.context, failed(expired(), '15'), env))).toEqual({ at: 'once', request: list('', { immediateRetry: true }) });
  });

  it('backs off and retries the same list after any other failure', () => {
    const t = step(listing(list('15', { paged: false })), synced, failed(statusError(500, 'InternalError'), '15'), env);
    expect(nextRequest(t)).toEqual({ at: 800, request: list('15', { paged: false }) });
  });

  it('listPage matters only while listing, once', () => {
    const paginated = listing(list('0'), true);
    expect(step(paginated, synced, { type: 'listPage' }, env).state).toBe(paginated);
    expect(step(watching, synced, { type: 'listPage' }, env).state).toBe(watching);
  });
});

describe('reflectorState.step: streaming lists (client-go reflector.go watchList() and its fallback)', () => {
  it('relists with a streaming list from the last version after a watch 410', () => {
    expect(nextRequest(step(watching, streamingSynced, failed(expired(), '15'), env))).toEqual({ at: 800, request: { kind: 'streamingList', resourceVersion: '15' } });
  });

  it.each([
    ['a refused connection', connectionRefused()],
    ['a 429', statusError(429, 'TooManyRequests')],
  ])('backs off and streams again after %s', (_label, error) => {
    const t = step(streamingList('10'), streamingSynced, failed(error), env);
    expect(nextRequest(t)).toEqual({ at: 800, request: { kind: 'streamingList', resourceVersion: '10' } });
    expect(t.context).toMatchObject({ streamingList: true, failures: 1, lastError: error });
  });

  it.each([
    ['a 410', expired()],
    ['a "too large resource version"', tooLarge()],
  ])('streams again at "" at once after %s', (_label, error) => {
    const t = step(streamingList('10'), streamingSynced, failed(error), env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: { kind: 'streamingList', resourceVersion: '' } });
    expect(t.context.resourceVersionUnavailable).toBe(true);
  });

  it.each([
    ['403 (a gateway)', statusError(403, 'Forbidden')],
    ['500', statusError(500, 'InternalError')],
    ['401', statusError(401, 'Unauthorized')],
    ['a reset connection', new NetworkError('socket hang up', 'ECONNRESET')],
    ['a malformed event', new ProtocolError('malformed-json', 'bad line')],
    ['an idle timeout', new IdleTimeoutError(305_000)],
  ])('lists in pages at once after %s, showing it in health, and streams again at the next relist', (_label, error) => {
    const t = step(streamingList('10'), streamingSynced, failed(error), env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('10', { paged: false }) });
    expect(t.context).toMatchObject({ streamingList: true, failures: 1, lastError: error });
    const relist = after(t.state, t.context, { type: 'listed', resourceVersion: '20' }, failed(expired(), '25'));
    expect(nextRequest(relist).request).toEqual({ kind: 'streamingList', resourceVersion: '25' });
  });

  it('lists in pages at once when a streaming list ends before its bookmark', () => {
    const t = step(streamingList(''), initialContext(true), { type: 'closed', resourceVersion: '', events: 12, durationMs: 3000 }, env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('0') });
    expect(t.context.lastError).toMatchObject({ problem: 'truncated-stream' });
  });

  it.each([422, 400])('lists in pages from then on when the server refuses a streaming list with %p, with nothing for health to show and only an info line (every server before 1.27 answers so)', (code) => {
    const t = step(streamingList(''), initialContext(true), failed(statusError(code, 'Invalid'), ''), env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('0') });
    expect(t.context).toMatchObject({ streamingList: false, failures: 0, lastError: undefined });
    expect(t.log?.level).toBe('info');
    const relist = after(t.state, t.context, { type: 'listed', resourceVersion: '20' }, failed(expired(), '25'));
    expect(nextRequest(relist).request).toEqual(list('25', { paged: false }));
  });

  it('lists in pages from then on when the initial-events-end bookmark does not come in time', () => {
    const t = step(streamingList(''), initialContext(true), { type: 'initialEventsTimeout' }, env);
    expect(nextRequest(t)).toEqual({ at: 'once', request: list('0') });
    expect(t.context.streamingList).toBe(false);
  });

  it('backs off after a failed fallback list, then tries the streaming list again (client-go: one streaming attempt per round)', () => {
    const t = after(streamingList('10'), streamingSynced, failed(statusError(403, 'Forbidden')), failed(statusError(403, 'Forbidden')));
    expect(nextRequest(t)).toEqual({ at: 800, request: { kind: 'streamingList', resourceVersion: '10' } });
    expect(t.context.failures).toBe(2);
  });
});

describe('reflectorState.step: a 400 is not retried as if it could heal', () => {
  it.each([
    ['watch', watching, synced],
    ['list', listing(list('0')), initialContext(false)],
  ])('waits as at the cap after a 400 on the %s from the first failure, and logs it as an error', (_label, state, context) => {
    const t = step(state, context, failed(statusError(400, 'BadRequest', { message: 'unable to parse requirement' })), env);
    expect(t.state).toMatchObject({ name: 'backingOff', delayMs: 30_000 });
    expect(t.log?.level).toBe('error');
    expect(t.context.lastError).toMatchObject({ code: 400 });
  });

  it('draws that wait from [cap, 2 × cap) like any wait at the cap', () => {
    const t = step(watching, synced, failed(statusError(400, 'BadRequest')), { ...env, random: () => 0.5 });
    expect(t.state).toMatchObject({ delayMs: 45_000 });
  });
});

describe('reflectorState.step: logs and inputs that do not apply', () => {
  it.each([
    [400, 'error'],
    [401, 'error'],
    [403, 'error'],
    [404, 'warn'],
    [429, 'warn'],
    [500, 'warn'],
    [410, 'info'],
  ])('logs a %p on the watch at level %p', (code, level) => {
    expect(step(watching, synced, failed(statusError(code, 'X')), env).log?.level).toBe(level);
  });

  it('ignores inputs that do not apply to the current state', () => {
    const backingOff: ReflectorState = { name: 'backingOff', next: { kind: 'watch', resourceVersion: '10' }, delayMs: 800 };
    for (const input of [
      { type: 'listPage' },
      { type: 'listed', resourceVersion: '1' },
      { type: 'initialEventsEnd', resourceVersion: '1' },
      { type: 'initialEventsTimeout' },
      { type: 'closed', resourceVersion: '1', events: 1, durationMs: 5000 },
      { type: 'failed', error: connectionRefused(), resourceVersion: '1' },
    ] as const) {
      expect(step(backingOff, synced, input, env)).toEqual({ state: backingOff, context: synced, effect: { kind: 'continue' }, log: undefined });
    }
    expect(step(watching, synced, { type: 'retry' }, env)).toMatchObject({ state: watching, effect: { kind: 'continue' } });
  });

  it('goes idle and stops everything on stop, from any state', () => {
    expect(step(watching, synced, { type: 'stop' }, env)).toMatchObject({ state: { name: 'idle' }, effect: { kind: 'stop' } });
  });
});

describe('listRequest', () => {
  it('pages at "" and "0", not at a specific version, unless the server paged the first list', () => {
    expect(listRequest('', false, false)).toEqual(list(''));
    expect(listRequest('0', false, false)).toEqual(list('0'));
    expect(listRequest('7', false, false)).toEqual(list('7', { paged: false }));
    expect(listRequest('7', true, false)).toEqual(list('7', { resourceVersionMatch: 'NotOlderThan' }));
    expect(listRequest('0', true, false)).toEqual(list('0'));
  });
});
