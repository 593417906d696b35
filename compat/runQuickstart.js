'use strict';
/*
 * Runs a compiled README quickstart as a user would, against a loopback API server from the packed
 * `rx-informer-apiserver`, for compat/run.sh:
 *   node runQuickstart.js PROGRAM.js|.cjs|.mjs
 * It starts the server, fills it with pods that keep changing (updates only), writes a kubeconfig
 * and runs PROGRAM with KUBECONFIG pointing at it (the quickstart calls `loadFromDefault()`).
 * Exits 0 when PROGRAM exited 0 by itself, having printed the lines the quickstart promises.
 */
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startApiServer, createChurn } = require('rx-informer-apiserver');

const PODS = 30;
const RUN_TIMEOUT_MS = 60_000;

async function main() {
  const program = path.resolve(process.argv[2]);
  const server = await startApiServer({ tls: true, token: 'quickstart' });
  const churn = createChurn(server.store, { pods: PODS, namespaces: 3, updatesPerSecond: 40 });
  churn.populate();
  churn.start();
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-informer-quickstart-'));
  const kubeconfig = path.join(folder, 'kubeconfig');
  fs.writeFileSync(kubeconfig, server.kubeConfig.exportConfig());
  try {
    const { code, output } = await run(program, { ...process.env, KUBECONFIG: kubeconfig });
    process.stdout.write(`${output.trimEnd().replace(/^/gm, '  ')}\n`);
    const expected = [new RegExp(`^synced: ${PODS} pods, \\d+ with app=web$`, 'm'), /^updated: 5 pods \(/m];
    const missing = expected.filter((line) => !line.test(output));
    if (code !== 0) throw new Error(`the quickstart exited with ${code}`);
    if (missing.length > 0) throw new Error(`the quickstart did not print ${missing.join(', ')}`);
  } finally {
    churn.stop();
    await server.close();
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** Runs `node PROGRAM`; resolves with its exit code and output once it ends by itself. */
function run(program, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [program], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the quickstart was still running after ${RUN_TIMEOUT_MS} ms; output:\n${output}`));
    }, RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, output });
    });
  });
}

main().catch((error) => {
  console.error(`quickstart: FAILED: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
