/**
 * Runs micro-benchmark variants in turn (A, B, A, B, ...), each in its own process, and prints
 * every figure they report as the median and range over the runs, with the ratio of each
 * variant's median to the first variant's. Taking turns spreads the noise of a shared machine
 * over every variant alike, which back-to-back batches do not.
 *
 *   node -r ts-node/register/transpile-only bench/micro/interleave.ts [--runs 5] \
 *     'ours: bench/micro/pipeline.ts b 100000 100000' \
 *     'immutable: -r ./bench/micro/useImmutableMap.ts bench/micro/pipeline.ts b 100000 100000'
 *
 * A variant is `name[@directory]: node arguments`; each runs as `node -r
 * ts-node/register/transpile-only <arguments>` in `directory` (default: here), so a checkout of
 * another commit compares as `before@../base: bench/micro/sync.ts b 100000`. A figure is a number
 * with a unit (`12.3 µs/event`, `845 ms`, `98 B/op`) in a `, `-separated segment of an output
 * line, named by the words before it in the segment, or else by the line's text before its colon.
 */
import { spawnSync } from 'node:child_process';

interface Variant {
  readonly name: string;
  readonly directory: string;
  readonly args: readonly string[];
}

const FIGURE = /^(.*?)(-?\d+(?:\.\d+)?)\s*(µs\/event|ms|s|MiB|KiB|B\/op|B\/entry|ns\/op|ns\/entry|events\/s)\b/;

function parseVariant(spec: string): Variant {
  const colon = spec.indexOf(':');
  if (colon < 0) throw new Error(`a variant is 'name[@directory]: node arguments', got ${JSON.stringify(spec)}`);
  const [name = '', directory = process.cwd()] = spec.slice(0, colon).trim().split('@');
  return { name, directory, args: spec.slice(colon + 1).trim().split(/\s+/) };
}

/** Every figure of one run's output, by name. */
function figures(output: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of output.split('\n')) {
    const colon = line.indexOf(': ');
    const head = colon < 0 ? '' : line.slice(0, colon);
    const body = colon < 0 ? line : line.slice(colon + 2);
    for (const segment of body.split(', ')) {
      const match = FIGURE.exec(segment.trim());
      if (match === null) continue;
      const [, label = '', value = '', unit = ''] = match;
      found.set(`${(label.trim() || head).trim()} (${unit})`, Number(value));
    }
  }
  return found;
}

function summary(values: readonly number[]): { median: number; text: string } {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
  const format = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toPrecision(3));
  return { median, text: `${format(median)} [${format(sorted[0]!)}–${format(sorted[sorted.length - 1]!)}]` };
}

function main(argv: readonly string[]): void {
  let runs = 5;
  const variants: Variant[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') runs = Number(argv[++i]);
    else variants.push(parseVariant(argv[i]!));
  }
  if (variants.length === 0 || !(runs > 0)) throw new Error("usage: interleave.ts [--runs n] 'name[@dir]: args' ...");
  const results = variants.map(() => new Map<string, number[]>());
  for (let run = 0; run < runs; run++) {
    variants.forEach((variant, v) => {
      const child = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', ...variant.args], { cwd: variant.directory, encoding: 'utf8' });
      if (child.status !== 0) throw new Error(`${variant.name} failed (${child.status}): ${child.stderr}`);
      process.stderr.write(`run ${run + 1}/${runs} ${variant.name}: ${child.stdout.trim().replace(/\n/g, ' | ')}\n`);
      for (const [name, value] of figures(child.stdout)) {
        const list = results[v]!.get(name) ?? [];
        list.push(value);
        results[v]!.set(name, list);
      }
    });
  }
  const names = [...results[0]!.keys()];
  const header = ['figure', ...variants.map((v) => `${v.name} median [range]`), ...variants.slice(1).map((v) => `${v.name} / ${variants[0]!.name}`)];
  const rows = names.map((name) => {
    const cells = results.map((byName) => summary(byName.get(name) ?? [NaN]));
    return [name, ...cells.map((c) => c.text), ...cells.slice(1).map((c) => (c.median / cells[0]!.median).toFixed(2))];
  });
  process.stdout.write(`${runs} interleaved runs per variant\n\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
}

main(process.argv.slice(2));
