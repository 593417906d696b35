import { drawTimeoutSeconds, listOptions, watchIdleMs, watchOptions } from '../../lib/reflector/requestOptions';
import type { ListRequest } from '../../lib/reflector/reflectorState';

const list = (resourceVersion: string, extra: Partial<ListRequest> = {}): ListRequest => ({ kind: 'list', resourceVersion, paged: true, immediateRetry: false, ...extra });

describe('listOptions (rule 1)', () => {
  it.each([
    ['a paged list at "0"', list('0'), 500, { resourceVersion: '0', limit: 500 }],
    ['a paged list with a match', list('15', { resourceVersionMatch: 'NotOlderThan' }), 500, { resourceVersion: '15', limit: 500, resourceVersionMatch: 'NotOlderThan' }],
    ['an unpaged list', list('15', { paged: false }), 500, { resourceVersion: '15', limit: 0 }],
    ['a paged list when pages are off (pageSize 0)', list(''), 0, { resourceVersion: '', limit: 0 }],
  ] as const)('asks %s as %p', (_label, request, pageSize, options) => {
    expect(listOptions(request, pageSize)).toEqual(options);
  });
});

describe('watchOptions (rules 2 and 4)', () => {
  it.each([
    ['a watch', { kind: 'watch', resourceVersion: '10' }, { resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 }],
    [
      'a streaming list',
      { kind: 'streamingList', resourceVersion: '' },
      { resourceVersion: '', resourceVersionMatch: 'NotOlderThan', sendInitialEvents: true, allowWatchBookmarks: true, timeoutSeconds: 300 },
    ],
  ] as const)('asks %s with bookmarks and its timeout', (_label, request, options) => {
    expect(watchOptions(request, 300)).toEqual(options);
  });
});

describe('drawTimeoutSeconds (rule 2)', () => {
  it.each([
    [0, { min: 300, max: 600 }, 300],
    [0.5, { min: 300, max: 600 }, 450],
    [0.9999, { min: 300, max: 600 }, 599],
    [0.5, { min: 30, max: 30 }, 30],
  ])('with random %p draws from %p: %p', (random, range, seconds) => {
    expect(drawTimeoutSeconds(range, () => random)).toBe(seconds);
  });
});

describe('watchIdleMs (rule 3)', () => {
  it('allows a watch 5 s beyond the timeout the server was asked for', () => {
    expect(watchIdleMs(300)).toBe(305_000);
  });
});
