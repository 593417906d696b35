/**
 * The differential run: the same seeded fault plans against rx-informer and against
 * `@kubernetes/client-node`'s informer (as is, and restarted from its `error` handler the way its
 * README does), each watching the same kind of churning loopback cluster.
 *
 * Part 1 plays each fault kind alone on a fresh cluster: did the cache get back to exactly the
 * server's state within the bound, and if not, how far off (missing / extra / stale keys) it ended.
 * Part 2 plays the whole seeded plan in one go.
 *
 * `SOAK_SEED=<seed>` replays; results go to docs/reliability.md (`--report -` prints only).
 * Run: `node -r ts-node/register/transpile-only soak/differential.ts`.
 */
import * as path from 'node:path';
import { clientNodeSubject } from './clientNodeSubject';
import { describeFigures, runSoak, type SoakConfig, type SoakReport } from './engine';
import { faultKinds, makeFaultPlan, soakSeed, type FaultKind } from './faultPlan';
import { shortSoak } from './presets';
import { fmtMs, writeSection } from './report';
import { rxInformerSubject } from './rxInformerSubject';
import type { SubjectFactory } from './subject';

const CONVERGENCE_BOUND_MS = 10_000;
const SEQUENCE_BOUND_MS = 35_000;

interface Contender {
  readonly label: string;
  readonly factory: SubjectFactory;
}

const contenders: readonly Contender[] = [
  { label: 'rx-informer', factory: rxInformerSubject },
  { label: 'client-node 2.0.1', factory: clientNodeSubject(undefined) },
  { label: 'client-node 2.0.1 + README restart (5 s)', factory: clientNodeSubject(5000) },
];

/** The short soak over TLS (client-node refuses plain http), with each library's default backoff. */
function differentialConfig(seed: number, steps: number, kinds?: readonly FaultKind[]): SoakConfig {
  const base = shortSoak(seed);
  return {
    ...base,
    tls: true,
    plan: { ...base.plan, steps, ...(kinds === undefined ? {} : { kinds }) },
    backoff: { initialMs: 800, maxMs: 30_000, resetAfterMs: 120_000 },
    convergenceTimeoutMs: CONVERGENCE_BOUND_MS,
    // Longer than the README's 5 s restart, so a restarted client-node can still meet the fault.
    maxFireWaitMs: 8000,
  };
}

/** One cell of the survival table. */
function verdict(report: SoakReport): string {
  const outcome = report.outcomes[0];
  if (outcome === undefined) return `did not start (${report.failures[0] ?? 'unknown'})`;
  const unreached = outcome.fired ? '' : ' (the fault itself was never reached)';
  if (outcome.convergedMs !== undefined) return `survives (${fmtMs(outcome.convergedMs)})${unreached}`;
  const stopped = report.alive ? '' : ', informer stopped';
  return `**diverges**: ${describeFigures(outcome.divergence)}${stopped}${unreached}`;
}

async function main(): Promise<void> {
  const seed = soakSeed();
  const reportFile = process.argv.includes('--report') ? process.argv[process.argv.indexOf('--report') + 1] ?? '-' : path.join(__dirname, '..', 'docs', 'reliability.md');
  console.log(`differential seed ${seed} (replay: SOAK_SEED=${seed} node -r ts-node/register/transpile-only soak/differential.ts)`);
  const started = performance.now();
  const plan = makeFaultPlan(seed, differentialConfig(seed, faultKinds.length).plan);

  const rows: string[] = [];
  rows.push(`| fault (as drawn from seed ${seed}) | ${contenders.map((c) => c.label).join(' | ')} |`);
  rows.push(`|---|${contenders.map(() => '---').join('|')}|`);
  for (const kind of faultKinds) {
    const cells: string[] = [];
    let description: string = kind;
    for (const contender of contenders) {
      let report: SoakReport;
      try {
        report = await runSoak(differentialConfig(seed, 1, [kind]), contender.factory);
      } catch (error: unknown) {
        cells.push(`did not start: ${String(error)}`);
        continue;
      }
      description = report.outcomes[0]?.description ?? kind;
      cells.push(verdict(report));
      console.log(`${kind.padEnd(24)} ${contender.label.padEnd(44)} ${verdict(report)}  errors: ${JSON.stringify(report.errors)}`);
    }
    rows.push(`| ${description} | ${cells.join(' | ')} |`);
  }

  const sequence: string[] = [];
  sequence.push(`| whole plan (${plan.faults.length} faults in a row, bound ${SEQUENCE_BOUND_MS / 1000} s each) | faults after which the cache converged | slowest convergence | first fault not recovered from within the bound | cache vs server at the end | illegal handler calls | still running |`);
  sequence.push('|---|---|---|---|---|---|---|');
  for (const contender of contenders) {
    // In a row, faults come every few seconds: client-go's backoff (which rx-informer follows) only
    // resets after 2 min without failure, so allow its 30 s cap plus a Retry-After per fault.
    const report = await runSoak({ ...differentialConfig(seed, faultKinds.length), convergenceTimeoutMs: SEQUENCE_BOUND_MS, abandonWhenStopped: true }, contender.factory);
    const converged = report.outcomes.filter((o) => o.convergedMs !== undefined).length;
    const first = report.outcomes.find((o) => o.convergedMs === undefined);
    const times = report.outcomes.map((o) => o.convergedMs).filter((t): t is number => t !== undefined);
    const slowest = times.length === 0 ? undefined : Math.max(...times);
    const illegal = report.handlers.reduce((sum, h) => sum + h.illegalCalls, 0);
    sequence.push(`| ${contender.label} | ${converged} of ${plan.faults.length} | ${fmtMs(slowest)} | ${first === undefined ? 'none' : `#${first.index} ${first.description}`} | ${report.final.convergedMs !== undefined ? 'exact' : describeFigures(report.final.divergence)} | ${illegal} | ${report.alive ? 'yes' : 'no'} |`);
    console.log(`sequence ${contender.label}: ${converged}/${report.outcomes.length} converged; end: ${describeFigures(report.final.divergence)}; errors ${JSON.stringify(report.errors)}`);
  }

  const markdown = [
    `Run: \`SOAK_SEED=${seed} node -r ts-node/register/transpile-only soak/differential.ts\` (${((performance.now() - started) / 1000).toFixed(0)} s, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}).`,
    `Each cell: one fault on a fresh cluster of 60 pods churning at 100 mutations/s over HTTPS; "survives" means the cache matched the server exactly within ${CONVERGENCE_BOUND_MS / 1000} s after the churn stopped (time in brackets); otherwise how far it ended from the server.`,
    '',
    ...rows,
    '',
    ...sequence,
  ].join('\n');
  console.log(`\n${markdown}\n`);
  if (reportFile !== '-') {
    writeSection(reportFile, 'differential', markdown);
    console.log(`results written to ${reportFile}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
