import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { within } from '../support/eventually';

/** `npm start -- --replicas 3`: the buckets of the stopped replica move to the others. */

const REPO = path.resolve(__dirname, '../..');

/** Runs the demo to its exit; past `timeoutMs`, kills it and fails with what it printed so far. */
async function runDemo(args: readonly string[], timeoutMs: number): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'demo/main.ts', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    return { code: await within(exited, timeoutMs, `the demo (${args.join(' ')}) to exit`, () => `stdout:\n${stdout.slice(-2_000)}\nstderr:\n${stderr}`), stdout, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** The bucket counts of each replica in one printed table. */
function bucketCounts(table: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of table.matchAll(/^ {2}(replica-\d) +(\d+) buckets/gm)) counts.set(match[1]!, Number(match[2]));
  return counts;
}

it('shows each replica’s buckets, and the stopped one’s moving to the others', async () => {
  const { code, stdout, stderr } = await runDemo(['--replicas', '3', '--pods', '300', '--stop-after', '1', '--until-moved', '--duration', '120'], 240_000);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toContain('stopped replica-1 (SIGTERM)');
  const [before, after] = stdout.split('stopped replica-1 (SIGTERM)') as [string, string];
  expect(after).toBeDefined();
  const tablesBefore = before.split(/^t=\d+s$/m);
  const settled = bucketCounts(tablesBefore[tablesBefore.length - 1]!);
  expect(settled.size).toBe(3);
  expect([...settled.values()].reduce((a, b) => a + b, 0)).toBe(64);
  const tablesAfter = after.split(/^t=\d+s$/m);
  const last = tablesAfter[tablesAfter.length - 1]!;
  expect(last).toMatch(/^ {2}replica-1 {2}stopped$/m);
  expect(last).toContain('unowned buckets: 0');
  const moved = bucketCounts(last);
  expect(moved.get('replica-0')! + moved.get('replica-2')!).toBe(64);
  expect(moved.get('replica-0')!).toBeGreaterThan(settled.get('replica-0')!);
  expect(moved.get('replica-2')!).toBeGreaterThan(settled.get('replica-2')!);
}, 300_000);
