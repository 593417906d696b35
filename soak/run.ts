/**
 * `npm run soak`: the long chaos soak. Bounded (a fixed number of faults, each with a bounded
 * storm and a bounded convergence wait) and seeded: the seed is printed first, and
 * `SOAK_SEED=<seed> npm run soak` replays the same fault plan and the same churn sequence.
 *
 * Options: `--steps N` (default 44: four faults of each kind), `--report FILE` (default
 * docs/reliability.md; `--report -` prints only), `--short` (the npm test preset).
 * Exit code 1 when any check failed.
 */
import * as path from 'node:path';
import { runSoak } from './engine';
import { soakSeed } from './faultPlan';
import { longSoak, shortSoak } from './presets';
import { soakMarkdown, writeSection } from './report';
import { rxInformerSubject } from './rxInformerSubject';

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function main(): Promise<void> {
  const seed = soakSeed();
  const steps = Number(argument('--steps') ?? 44);
  const short = process.argv.includes('--short');
  const reportFile = argument('--report') ?? path.join(__dirname, '..', 'docs', 'reliability.md');
  console.log(`soak seed ${seed} (replay: SOAK_SEED=${seed} npm run soak${short ? ' -- --short' : ''})`);
  const started = performance.now();
  const log = (line: string): void => console.log(`${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
  const config = short ? shortSoak(seed, log) : longSoak(seed, steps, log);
  const report = await runSoak(config, rxInformerSubject);
  const markdown = soakMarkdown(report, `SOAK_SEED=${seed} npm run soak${short ? ' -- --short' : steps === 44 ? '' : ` -- --steps ${steps}`}`);
  console.log(`\n${markdown}\n`);
  if (reportFile !== '-' && !short) {
    writeSection(reportFile, 'soak', markdown);
    console.log(`figures written to ${reportFile}`);
  }
  if (report.failures.length > 0) {
    console.error(`soak FAILED with seed ${seed}:\n${report.failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
