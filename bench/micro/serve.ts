/**
 * A loopback API server for the HTTP runs of `sync.ts`, holding N realistic pods (~4.4 KB,
 * managedFields included) with no churn, its kubeconfig written to a file:
 *
 *   node -r ts-node/register/transpile-only bench/micro/serve.ts 100000 /tmp/kc.yaml [paged|1.33|…]
 *
 * `paged` (the default) is the loopback server's default profile, which pages the first list
 * (`limit=500&resourceVersion=0`) as no real API server does; a version (`1.33`, `1.36`) answers
 * like that version: the first list whole, in one response. (`rx-informer-apiserver` always
 * answers like a version.) Stop it with Ctrl-C.
 */
import { writeFileSync } from 'node:fs';
import { createChurn } from '../../apiserver/src/churn';
import { startApiServer } from '../../apiserver/src/server';
import { isServerVersion } from '../../apiserver/src/serverVersion';

const [podsText = '100000', kubeconfigOut = 'kubeconfig.yaml', profile = 'paged'] = process.argv.slice(2);
if (profile !== 'paged' && !isServerVersion(profile)) throw new Error(`unknown profile ${profile}: paged or a version such as 1.33`);

void (async () => {
  const server = await startApiServer(profile === 'paged' ? {} : { serverVersion: profile });
  createChurn(server.store, { pods: Number(podsText), namespaces: 10, seed: 1, managedFields: true }).populate();
  writeFileSync(kubeconfigOut, server.kubeConfig.exportConfig(), { mode: 0o600 });
  process.stdout.write(`${podsText} pods at ${server.url} (${profile === 'paged' ? 'first list paged' : `answers like ${profile}`}); kubeconfig in ${kubeconfigOut}\n`);
  const stop = (): void => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
})();
