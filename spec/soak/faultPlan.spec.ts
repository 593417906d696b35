import { describeFault, faultKinds, makeFaultPlan, soakSeed } from '../../soak/faultPlan';

describe('makeFaultPlan', () => {
  it('draws the same plan from the same seed', () => {
    expect(makeFaultPlan(1234, { steps: 30 })).toEqual(makeFaultPlan(1234, { steps: 30 }));
  });

  it('draws different plans from different seeds', () => {
    expect(makeFaultPlan(1, { steps: 30 }).faults).not.toEqual(makeFaultPlan(2, { steps: 30 }).faults);
  });

  it('covers every fault kind in each round of faultKinds.length steps', () => {
    for (const seed of [1, 2, 3, 99, 2 ** 31 - 1]) {
      const kinds = makeFaultPlan(seed, { steps: faultKinds.length * 2 }).faults.map((f) => f.fault.kind);
      expect(new Set(kinds.slice(0, faultKinds.length))).toEqual(new Set(faultKinds));
      expect(new Set(kinds.slice(faultKinds.length))).toEqual(new Set(faultKinds));
    }
  });

  it('keeps drawn parameters inside the configured bounds', () => {
    const plan = makeFaultPlan(7, { steps: 200, stormMs: { min: 100, max: 200 }, maxStallMs: 600, maxSlowWriteMs: 6, maxBurst: 2 });
    for (const { fault, stormMs } of plan.faults) {
      expect(stormMs).toBeGreaterThanOrEqual(100);
      expect(stormMs).toBeLessThanOrEqual(200);
      if (fault.kind === 'stall') expect(fault.ms).toBeLessThanOrEqual(600);
      if (fault.kind === 'slowWrites') expect(fault.delayMs).toBeLessThanOrEqual(6);
      if (fault.kind === 'statusBurst' || fault.kind === 'plainText429') expect(fault.times).toBeLessThanOrEqual(2);
      expect(describeFault(fault)).not.toBe('');
    }
  });

  it('draws only the kinds asked for', () => {
    const kinds = new Set(makeFaultPlan(5, { steps: 20, kinds: ['restart', 'compaction'] }).faults.map((f) => f.fault.kind));
    expect(kinds).toEqual(new Set(['restart', 'compaction']));
  });
});

describe('soakSeed', () => {
  it('replays SOAK_SEED when it is set', () => {
    expect(soakSeed({ SOAK_SEED: '42' })).toBe(42);
  });

  it('rejects a SOAK_SEED that is not an integer', () => {
    expect(() => soakSeed({ SOAK_SEED: 'abc' })).toThrow(RangeError);
  });

  it('draws a fresh non-negative integer seed otherwise', () => {
    const seed = soakSeed({});
    expect(Number.isSafeInteger(seed) && seed >= 0).toBe(true);
  });
});
