/**
 * Micro-benchmark of decoding one list response without HTTP: the body of N pods (~4.4 KB each,
 * managedFields included) cut into 64 KiB pieces as a socket delivers them, decoded by
 *
 * - `whole`: the pieces joined and `JSON.parse`d at once (list$ below its threshold);
 * - `decoder <batchChars>`: `ListDecoder`, batches handed over as they complete;
 * - `exact <batchChars>`: the same with the learned boundary search disabled (every item
 *   delimited by the exact scanner, as a body whose boundaries do not repeat would be);
 * - `scan`: the exact scanner alone over every piece (no parsing), and `search`: the native
 *   `indexOf` of the item boundary alone.
 *
 * With `keep` as the third argument the items are kept in an array (as a cache keeps them), so
 * garbage collection of the retained heap is counted; without, they are dropped.
 *
 *   node -r ts-node/register/transpile-only bench/micro/listDecode.ts 20000 'whole,decoder 65536,decoder 1048576' keep
 *
 * Prints per variant: wall time, CPU time, the longest synchronous step (one piece pushed, with
 * the batches it completes) and the longest GC pause.
 */
import { ListDecoder } from '../../lib/sources/listDecoder';
import { JsonValueEnd } from '../../lib/sources/jsonValueEnd';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { observeGcPauses } from './gcPauses';

const [countText = '20000', variantsText = 'whole,decoder 65536,decoder 262144,decoder 1048576,exact 1048576,scan,search', keepText] = process.argv.slice(2);
const count = Number(countText);
const keep = keepText === 'keep';
const PIECE = 64 * 1024;

function body(): string[] {
  const random = seededRandom(7);
  const items: string[] = [];
  for (let i = 0; i < count; i++) {
    const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
    // As the API server writes a typed list: no kind/apiVersion in the items, metadata first.
    const { apiVersion: _apiVersion, kind: _kind, ...rest } = { ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) } };
    items.push(JSON.stringify(rest));
  }
  const text = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${count}"},"items":[${items.join(',')}]}`;
  const pieces: string[] = [];
  // Pieces as a UTF-8 decoder hands them out: flat one-byte strings (these pods are ASCII).
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += PIECE) pieces.push(bytes.toString('latin1', at, Math.min(bytes.length, at + PIECE)));
  return pieces;
}

const pieces = body();
const totalChars = pieces.reduce((sum, piece) => sum + piece.length, 0);
process.stdout.write(`${count} pods, ${(totalChars / 2 ** 20).toFixed(1)} MiB in ${pieces.length} pieces of 64 KiB${keep ? ', items kept' : ''}\n`);

type Run = (step: (work: () => void) => void) => number;

function decode(batchChars: number, exactOnly: boolean): Run {
  return (step) => {
    const kept: unknown[] = [];
    let items = 0;
    const take = (batch: unknown[]): void => {
      items += batch.length;
      if (keep) for (const item of batch) kept.push(item);
    };
    const decoder = new ListDecoder({ path: '/api/v1/pods', batchChars, maxChars: 2 ** 29, onItems: take });
    // Forces the exact scan: a failed boundary guess switches to it for good; here from the start.
    if (exactOnly) (decoder as unknown as { exactOnly: boolean }).exactOnly = true;
    for (const piece of pieces) step(() => decoder.push(piece));
    step(() => take((decoder.end() as { items: unknown[] }).items));
    return items;
  };
}

const variants: Record<string, Run> = {
  whole: (step) => {
    let text = '';
    for (const piece of pieces) step(() => (text += piece));
    let items = 0;
    step(() => {
      const list = JSON.parse(text) as { items: unknown[] };
      items = list.items.length;
      if (keep) (globalThis as { kept?: unknown }).kept = list.items;
    });
    return items;
  },
  scan: (step) => {
    const end = new JsonValueEnd();
    end.start();
    let values = 0;
    for (const piece of pieces) {
      step(() => {
        let at = 0;
        while (at < piece.length) {
          const found = end.scan(piece, at);
          if (found === -1) break;
          values++;
          at = found;
          end.start();
        }
      });
    }
    return values;
  },
  search: (step) => {
    let found = 0;
    for (const piece of pieces) {
      step(() => {
        for (let at = piece.indexOf('},{"metadata":'); at !== -1; at = piece.indexOf('},{"metadata":', at + 1)) found++;
      });
    }
    return found;
  },
};

const gc = observeGcPauses();

async function runVariant(name: string): Promise<void> {
  const [kind = '', sizeText] = name.split(' ');
  const run = kind === 'decoder' || kind === 'exact' ? decode(Number(sizeText), kind === 'exact') : variants[kind];
  if (run === undefined) throw new Error(`unknown variant ${name}`);
  (globalThis as { gc?: () => void }).gc?.();
  await new Promise((resolve) => setTimeout(resolve, 10));
  gc.reset();
  let longest = 0;
  const step = (work: () => void): void => {
    const started = performance.now();
    work();
    longest = Math.max(longest, performance.now() - started);
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  const items = run(step);
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  (globalThis as { kept?: unknown }).kept = undefined;
  // GC entries are delivered after the run's turn.
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.stdout.write(
    `${name.padEnd(16)} ${wall.toFixed(0).padStart(6)} ms, cpu ${((used.user + used.system) / 1000).toFixed(0).padStart(6)} ms, longest step ${longest.toFixed(1).padStart(6)} ms, ` +
      `gc ${gc.totalMs.toFixed(0)} ms (longest ${gc.longestMs.toFixed(0)}), ${items} found\n`,
  );
}

void (async () => {
  for (const name of variantsText.split(',')) await runVariant(name.trim());
})();
