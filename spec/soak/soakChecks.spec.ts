import { runSoak } from '../../soak/engine';
import { shortSoak } from '../../soak/presets';
import { rxInformerSubject } from '../../soak/rxInformerSubject';
import type { Subject, SubjectFactory } from '../../soak/subject';

/** rx-informer, except that its cache forgets one object: what a lost deletion or add looks like from outside. */
const forgetful: SubjectFactory = async (server, context) => {
  const real = await rxInformerSubject(server, context);
  const subject: Subject = {
    name: 'forgetful',
    cache: () => {
      const versions = new Map(real.cache());
      const first = versions.keys().next();
      if (first.done !== true) versions.delete(first.value);
      return versions;
    },
    ledgers: real.ledgers,
    get events() {
      return real.events;
    },
    errors: real.errors,
    get alive() {
      return real.alive;
    },
    stop: () => real.stop(),
  };
  return subject;
};

describe('the soak checks are not vacuous', () => {
  it('fails a subject whose cache does not match the server, naming the fault and the gap', async () => {
    const base = shortSoak(11);
    const report = await runSoak({ ...base, plan: { ...base.plan, steps: 1, kinds: ['watchDrop'] }, convergenceTimeoutMs: 300 }, forgetful);
    expect(report.outcomes[0]?.convergedMs).toBeUndefined();
    expect(report.outcomes[0]?.divergence).toEqual({ missing: 1, extra: 0, stale: 0 });
    expect(report.failures.join('\n')).toMatch(/fault #0 \(watch drop.*\): cache did not match the server within 300 ms \(missing 1, extra 0, stale 0\)/);
    expect(report.leaked).toEqual({});
  }, 30_000);
});
