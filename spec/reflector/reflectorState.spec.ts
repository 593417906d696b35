import { defaultBackoffConfig } from '../../lib/reflector/backoff';
import { initialContext, phaseOf, relistRequest, step } from '../../lib/reflector/reflectorState';
import type { ReflectorContext, ReflectorInput, ReflectorState } from '../../lib/reflector/reflectorState';
import { IdleTimeoutError } from '../../lib/sources/errors';
import { connectionRefused, expired, statusError } from './reflectHarness';

const env = { now: 1000, random: () => 1, backoff: defaultBackoffConfig };
const watching: ReflectorState = { name: 'watching', request: { kind: 'watch', resourceVersion: '10' } };
const synced: ReflectorContext = { ...initialContext(false), resourceVersion: '10' };

function after(state: ReflectorState, context: ReflectorContext, ...inputs: ReflectorInput[]) {
  let transition = step(state, context, inputs[0] ?? { type: 'start' }, env);
  for (const input of inputs.slice(1)) transition = step(transition.state, transition.context, input, env);
  return transition;
}

describe('reflectorState.step', () => {
  it('starts with a paged list at "0", or a streaming list at "" when streaming', () => {
    expect(step({ name: 'idle' }, initialContext(false), { type: 'start' }, env).effect).toEqual({ kind: 'open', request: { kind: 'list', resourceVersion: '0' } });
    expect(step({ name: 'idle' }, initialContext(true), { type: 'start' }, env).effect).toEqual({ kind: 'open', request: { kind: 'streamingList', resourceVersion: '' } });
  });

  it('watches from the list resourceVersion once the list is complete, clearing failures', () => {
    const failing = { ...initialContext(false), failures: 3, lastError: connectionRefused() };
    const t = step({ name: 'listing', request: { kind: 'list', resourceVersion: '0' } }, failing, { type: 'listed', resourceVersion: '42' }, env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '42' } });
    expect(t.context).toMatchObject({ resourceVersion: '42', failures: 0, lastError: undefined });
  });

  it('keeps the stream open when a streaming list reaches its bookmark', () => {
    const t = step({ name: 'streamingList', request: { kind: 'streamingList', resourceVersion: '' } }, initialContext(true), { type: 'initialEventsEnd', resourceVersion: '7' }, env);
    expect(t.effect).toEqual({ kind: 'continue' });
    expect(phaseOf(t.state)).toBe('watching');
    expect(t.context.resourceVersion).toBe('7');
  });

  it('takes the last observed resourceVersion from the input that ends a request', () => {
    const t = step(watching, synced, { type: 'closed', resourceVersion: '15', events: 3, durationMs: 5000 }, env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '15' } });
  });

  it('relists at the last resourceVersion after a watch 410, then at "" if that list 410s, then at the new version', () => {
    const relist = step(watching, synced, { type: 'failed', error: expired(), resourceVersion: '15' }, env);
    expect(relist.state).toEqual({ name: 'backingOff', next: { kind: 'list', resourceVersion: '15' }, delayMs: 800 });
    const consistent = after(relist.state, relist.context, { type: 'retry' }, { type: 'failed', error: expired(), resourceVersion: '15' });
    expect(consistent.state).toMatchObject({ name: 'backingOff', next: { kind: 'list', resourceVersion: '' } });
    const back = after(consistent.state, consistent.context, { type: 'retry' }, { type: 'listed', resourceVersion: '30' });
    expect(back.context.resourceVersionUnavailable).toBe(false);
    expect(relistRequest(back.context)).toEqual({ kind: 'list', resourceVersion: '30' });
  });

  it('re-watches at once after an idle timeout, counting it as a failure without consuming backoff', () => {
    const t = step(watching, synced, { type: 'failed', error: new IdleTimeoutError(604_000), resourceVersion: '10' }, env);
    expect(t.effect).toEqual({ kind: 'open', request: { kind: 'watch', resourceVersion: '10' } });
    expect(t.context).toMatchObject({ failures: 1, backoff: synced.backoff });
    expect(t.log?.level).toBe('warn');
  });

  it.each([
    [401, 'error'],
    [403, 'error'],
    [404, 'error'],
    [429, 'warn'],
    [500, 'warn'],
    [410, 'info'],
  ])('logs a %p on the watch at level %p', (code, level) => {
    expect(step(watching, synced, { type: 'failed', error: statusError(code, 'X'), resourceVersion: '10' }, env).log?.level).toBe(level);
  });

  it('ignores inputs that do not apply to the current state', () => {
    const backingOff: ReflectorState = { name: 'backingOff', next: { kind: 'watch', resourceVersion: '10' }, delayMs: 800 };
    for (const input of [
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
