import * as fs from 'node:fs';
import type { SoakReport } from './engine';
import { faultKinds } from './faultPlan';

/**
 * Turns soak results into the markdown of docs/reliability.md. Each generated block sits between
 * `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers, so a new run replaces its own block and
 * leaves the hand-written text around it alone.
 */

const MiB = 1024 * 1024;

/** The figures of one long soak run, as markdown. */
export function soakMarkdown(report: SoakReport, command: string): string {
  const lines: string[] = [];
  const seconds = (report.durationMs / 1000).toFixed(0);
  lines.push(`Run: \`${command}\` (seed **${report.seed}**, ${seconds} s, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}).`);
  lines.push(`Result: **${report.failures.length === 0 ? 'passed' : `FAILED (${report.failures.length})`}**.`);
  lines.push('');
  lines.push('| figure | value |');
  lines.push('|---|---|');
  lines.push(`| cache changes applied (changes$) | ${report.events} |`);
  lines.push(`| mutations by the churn (create / update / delete) | ${report.mutations.creates} / ${report.mutations.updates} / ${report.mutations.deletes} |`);
  lines.push(`| pods on the server at the end | ${report.serverObjects} |`);
  lines.push(`| relists (lists after the first) | ${report.relists} |`);
  lines.push(`| requests served | ${report.requests} |`);
  lines.push(`| final convergence after the last fault | ${fmtMs(report.final.convergedMs)} |`);
  lines.push(`| peak RSS / peak heap used | ${(report.peakRssBytes / MiB).toFixed(0)} MiB / ${(report.peakHeapBytes / MiB).toFixed(0)} MiB |`);
  const heaps = report.heapAfterFaults;
  if (heaps.length > 0) {
    lines.push(`| heap after the first / last fault settled | ${(heaps[0]! / MiB).toFixed(0)} MiB / ${(heaps[heaps.length - 1]! / MiB).toFixed(0)} MiB |`);
  }
  lines.push(`| sockets and timers left after unsubscribing | ${Object.keys(report.leaked).length === 0 ? 'none' : JSON.stringify(report.leaked)} |`);
  lines.push('');
  lines.push('Convergence time is measured from the moment the churn stops after a fault to the moment the cache holds exactly the server\'s objects at the server\'s resourceVersions.');
  lines.push('');
  lines.push('| fault | planned | hit a request | converged | median convergence | max convergence |');
  lines.push('|---|---|---|---|---|---|');
  for (const kind of faultKinds) {
    const summary = report.byKind[kind];
    const times = report.outcomes.filter((o) => o.kind === kind && o.convergedMs !== undefined).map((o) => o.convergedMs as number);
    lines.push(`| ${kind} | ${summary.planned} | ${summary.fired} | ${summary.converged} | ${fmtMs(median(times))} | ${fmtMs(summary.maxConvergedMs)} |`);
  }
  lines.push('');
  lines.push('Faults the server applied, by its own names: ' + Object.entries(report.serverFaults).map(([k, v]) => `${k} ${v}`).join(', ') + '.');
  lines.push('');
  lines.push('Errors the informer reported on health$ (while backing off): ' + (Object.keys(report.errors).length === 0 ? 'none' : Object.entries(report.errors).map(([k, v]) => `${k} × ${v}`).join(', ')) + '.');
  lines.push('');
  lines.push('| handler | adds | updates | deletes | of which finalStateUnknown | illegal calls | final view vs server |');
  lines.push('|---|---|---|---|---|---|---|');
  for (const h of report.handlers) {
    const d = h.divergence;
    lines.push(`| ${h.name} | ${h.counts.adds} | ${h.counts.updates} | ${h.counts.deletes} | ${h.counts.finalStateUnknownDeletes} | ${h.illegalCalls} | ${d.missing + d.extra + d.stale === 0 ? 'exact' : `missing ${d.missing}, extra ${d.extra}, stale ${d.stale}`} |`);
  }
  if (report.failures.length > 0) {
    lines.push('');
    lines.push('Failures:');
    for (const failure of report.failures) lines.push(`- ${failure}`);
  }
  return lines.join('\n');
}

/** Replaces the block between `<!-- name:begin -->` and `<!-- name:end -->` in `file` (appends it when absent). */
export function writeSection(file: string, name: string, content: string): void {
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${content}\n${end}`;
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  const next = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}\n${block}\n`;
  fs.writeFileSync(file, next);
}

/** `123 ms`, `4.2 s`, or `never` for undefined. */
export function fmtMs(value: number | undefined): string {
  if (value === undefined) return 'never';
  return value < 1000 ? `${Math.round(value)} ms` : `${(value / 1000).toFixed(1)} s`;
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
