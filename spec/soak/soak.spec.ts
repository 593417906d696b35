import { runSoak, type SoakReport } from '../../soak/engine';
import { faultKinds, soakSeed } from '../../soak/faultPlan';
import { shortSoak } from '../../soak/presets';
import { rxInformerSubject } from '../../soak/rxInformerSubject';

/**
 * The short seeded chaos soak: one fault of every kind against a churning loopback cluster.
 * The seed is printed; `SOAK_SEED=<seed> npx jest spec/soak/soak.spec.ts` replays the same plan.
 */
describe('chaos soak (short, seeded)', () => {
  const seed = soakSeed();
  let report: SoakReport;

  beforeAll(async () => {
    console.log(`chaos soak seed ${seed} (replay: SOAK_SEED=${seed} npx jest spec/soak/soak.spec.ts)`);
    report = await runSoak(shortSoak(seed), rxInformerSubject);
  }, 60_000);

  it('keeps every promise: convergence after each fault, legal handler calls, no leak, bounded memory', () => {
    expect({ seed, failures: report.failures }).toEqual({ seed, failures: [] });
  });

  it('converges to exactly the server state once the faults stop', () => {
    expect(report.final.divergence).toEqual({ missing: 0, extra: 0, stale: 0 });
    expect(report.final.convergedMs).toBeDefined();
    expect(report.final.convergedMs).toBeGreaterThanOrEqual(0);
  });

  it('delivers every deletion to every handler, late ones included', () => {
    expect(report.handlers.map((h) => h.name)).toEqual(['changes$', 'sync handler', 'async handler', 'late handler']);
    for (const handler of report.handlers) {
      expect({ handler: handler.name, seed, divergence: handler.divergence }).toEqual({ handler: handler.name, seed, divergence: { missing: 0, extra: 0, stale: 0 } });
      expect(handler.counts.deletes).toBeGreaterThan(0);
    }
  });

  it('plays every kind of fault, and nearly all of them reach a request', () => {
    for (const kind of faultKinds) expect(report.byKind[kind].planned).toBeGreaterThanOrEqual(1);
    const unfired = report.outcomes.filter((o) => !o.fired).map((o) => o.description);
    expect({ seed, unfired: unfired.length <= 1 ? [] : unfired }).toEqual({ seed, unfired: [] });
  });

  it('leaves no socket or timer behind after unsubscribing', () => {
    expect(report.leaked).toEqual({});
  });
});
