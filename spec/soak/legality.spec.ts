import type { KubeObject } from '../../lib/base/object';
import { HandlerLedger, isConverged, type LegalityRule } from '../../soak/legality';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const key = (name: string) => `ns/${name}`;

function ledger(relists = 0): HandlerLedger {
  return new HandlerLedger('test', () => relists);
}

function rulesOf(l: HandlerLedger): LegalityRule[] {
  return l.violations.map((v) => v.rule);
}

describe('HandlerLedger', () => {
  it('accepts add, updates from the state seen, delete, and a new add after it', () => {
    const l = ledger();
    l.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '1'), object: obj('a', '5') });
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '5'), object: obj('a', '5'), isResync: true });
    l.observe({ type: 'delete', key: key('a'), object: obj('a', '6'), finalStateUnknown: false });
    l.observe({ type: 'add', key: key('a'), object: obj('a', '9') });
    expect(l.violations).toEqual([]);
    expect(l.stats).toEqual({ adds: 2, updates: 1, resyncs: 1, deletes: 1, finalStateUnknownDeletes: 0 });
  });

  it('flags an update before any add', () => {
    const l = ledger();
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '1'), object: obj('a', '2') });
    expect(rulesOf(l)).toEqual(['update-of-absent-key']);
  });

  it('flags an add of a key already held', () => {
    const l = ledger();
    l.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    l.observe({ type: 'add', key: key('a'), object: obj('a', '2') });
    expect(rulesOf(l)).toEqual(['add-of-present-key']);
  });

  it('flags an update whose old object is not the state the handler saw', () => {
    const l = ledger();
    l.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '3'), object: obj('a', '4') });
    expect(rulesOf(l)).toEqual(['update-from-unseen-state']);
  });

  it('flags anything after a delete until a new add', () => {
    const l = ledger();
    l.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    l.observe({ type: 'delete', key: key('a'), object: obj('a', '2'), finalStateUnknown: false });
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '2'), object: obj('a', '3') });
    l.observe({ type: 'delete', key: key('b'), object: obj('b', '4'), finalStateUnknown: false });
    expect(rulesOf(l)).toEqual(['update-of-absent-key', 'delete-of-absent-key']);
  });

  it('flags finalStateUnknown before any relist and accepts it after one', () => {
    const before = ledger(0);
    before.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    before.observe({ type: 'delete', key: key('a'), object: obj('a', '1'), finalStateUnknown: true });
    expect(rulesOf(before)).toEqual(['final-state-unknown-without-relist']);
    const after = ledger(1);
    after.observe({ type: 'add', key: key('a'), object: obj('a', '1') });
    after.observe({ type: 'delete', key: key('a'), object: obj('a', '1'), finalStateUnknown: true });
    expect(after.violations).toEqual([]);
    expect(after.stats.finalStateUnknownDeletes).toBe(1);
  });

  it('flags time travel: an older version after a newer one, or a re-add at a version already seen', () => {
    const l = ledger(1);
    l.observe({ type: 'add', key: key('a'), object: obj('a', '5') });
    l.observe({ type: 'update', key: key('a'), oldObject: obj('a', '5'), object: obj('a', '3') });
    l.observe({ type: 'delete', key: key('a'), object: obj('a', '3'), finalStateUnknown: true });
    l.observe({ type: 'add', key: key('a'), object: obj('a', '5') });
    expect(rulesOf(l)).toEqual(['time-travel', 'time-travel']);
  });

  it('settles against the server: missing keys, deletions never heard of, and stale versions are flagged', () => {
    const l = ledger();
    l.observe({ type: 'add', key: key('kept'), object: obj('kept', '1') });
    l.observe({ type: 'add', key: key('gone'), object: obj('gone', '2') });
    l.observe({ type: 'add', key: key('old'), object: obj('old', '3') });
    const divergence = l.settle(new Map([[key('kept'), '1'], [key('old'), '7'], [key('new'), '8']]));
    expect(divergence).toEqual({ missing: [key('new')], missedDeletes: [key('gone')], stale: [key('old')] });
    expect(isConverged(divergence)).toBe(false);
    expect(rulesOf(l)).toEqual(['ends-off-server', 'ends-off-server', 'ends-off-server']);
  });

  it('counts every violation but keeps only the first 50', () => {
    const l = ledger();
    for (let i = 0; i < 80; i++) l.observe({ type: 'update', key: key(`k${i}`), oldObject: obj('x', '1'), object: obj('x', '2') });
    expect(l.violationTotal).toBe(80);
    expect(l.violations).toHaveLength(50);
  });
});
