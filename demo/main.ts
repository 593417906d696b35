#!/usr/bin/env node
/**
 * `npm start`: a live terminal view of an rx-informer. Watches the current kubeconfig context when
 * asked (`--kubeconfig`, `--context`), otherwise an embedded loopback cluster with churn. It uses
 * only the library's public API (`../lib` is what users import as `rx-informer`).
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import { dropManagedFields, informer, informerName, type Health, type KubeObject, type Snapshot } from '../lib';
import { DemoArgsError, demoUsage, parseDemoArgs, type DemoOptions } from './args';
import { loadKubeConfig } from './kubeConfig';
import { startLoopback, type Loopback } from './loopback';
import { replicasMain } from './replicas';
import { DemoStats } from './stats';
import { HIDE_CURSOR, screen, SHOW_CURSOR, summaryLine, terminalFrame, type ViewState } from './view';

const COMMAND = 'rx-informer demo';

/** What a run has started so far; shutdown releases whatever is there. */
interface Running {
  loopback?: Loopback;
  readonly subscriptions: Subscription[];
  readonly timers: NodeJS.Timeout[];
  redrawing: boolean;
}

async function run(options: DemoOptions): Promise<void> {
  const startedAt = Date.now();
  const redraw = options.redraw ?? process.stdout.isTTY === true;
  const running: Running = { subscriptions: [], timers: [], redrawing: false };
  const stats = new DemoStats();
  const print = (line: string): boolean => process.stdout.write(`${line}\n`);
  let render: () => void = () => undefined;
  let stopping = false;

  const shutdown = async (why: string, code = 0): Promise<void> => {
    if (stopping) return;
    stopping = true;
    for (const timer of running.timers) clearTimeout(timer);
    render();
    for (const subscription of running.subscriptions) subscription.unsubscribe();
    if (running.redrawing) process.stdout.write(SHOW_CURSOR);
    running.redrawing = false;
    await running.loopback?.stop();
    const { add, update, delete: deleted } = stats.changeTotals();
    print(`stopped (${why}) after ${((Date.now() - startedAt) / 1000).toFixed(1)}s: ${add} added, ${update} updated, ${deleted} deleted since sync`);
    process.exit(code);
  };
  // Handlers go in first: a Ctrl-C during start-up must still close the server.
  // A second signal while closing means "now".
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    void shutdown(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Whatever ends the process, the terminal gets its cursor back.
  process.on('exit', () => {
    if (running.redrawing) process.stdout.write(SHOW_CURSOR);
  });
  // The reader went away (`npm start | head`): nothing more to show.
  process.stdout.on('error', () => process.exit(0));
  if (options.durationSeconds !== undefined) running.timers.push(setTimeout(() => void shutdown('duration reached'), options.durationSeconds * 1000));

  let kubeConfig: KubeConfig;
  let source: string;
  if (options.external) {
    kubeConfig = loadKubeConfig(new KubeConfig(), options);
    source = `context ${kubeConfig.getCurrentContext()} (${kubeConfig.getCurrentCluster()?.server ?? '?'})`;
  } else {
    // Filling a big cluster takes a while (100k pods: seconds): say so before going quiet.
    print(`starting the loopback cluster with ${options.pods} ${options.resource.plural === 'namespaces' ? 'pods' : options.resource.plural}...`);
    const loopback = await startLoopback({ resource: options.resource, objects: options.pods, namespaces: options.namespaces, churn: options.churn, seed: options.seed });
    running.loopback = loopback;
    if (stopping) {
      await loopback.stop();
      return;
    }
    kubeConfig = loopback.server.kubeConfig;
    source = loopback.description;
  }

  const scope = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const name = informerName(options.resource, scope);
  const watched = informer<KubeObject>(kubeConfig, options.resource, { ...scope, name, pageSize: options.pageSize, transform: dropManagedFields });

  let health: Health | undefined;
  let latest: Snapshot | undefined;
  const listStartedAt = Date.now();
  running.subscriptions.push(watched.health$.subscribe((report) => (health = report)));
  running.subscriptions.push(
    watched.informer$.subscribe({
      next: (snapshot) => {
        const now = Date.now();
        stats.apply(snapshot.changes, now);
        latest = snapshot;
        if (snapshot.synced && stats.syncedAt === undefined) {
          stats.markSynced(now);
          if (!redraw) print(`synced: ${snapshot.size} ${options.resource.plural} listed in ${now - listStartedAt}ms at rv ${snapshot.resourceVersion}`);
        }
      },
      // Only a transform or index function can fail the cache; the watch itself retries forever.
      error: (error: unknown) => {
        process.stderr.write(`${COMMAND}: the informer failed: ${error instanceof Error ? error.message : String(error)}\n`);
        void shutdown('informer failed', 1);
      },
    }),
  );

  const state = (): ViewState | undefined => {
    if (health === undefined) return undefined;
    const now = Date.now();
    const syncedAt = stats.syncedAt;
    return {
      informerName: name,
      source,
      elapsedMs: now - startedAt,
      health,
      now,
      syncedInMs: syncedAt === undefined ? undefined : syncedAt - listStartedAt,
      objects: latest?.size ?? 0,
      resourceVersion: latest?.resourceVersion ?? '',
      namespaces: stats.counts.byNamespace(),
      phases: stats.counts.byPhase(),
      eventsPerSecond: stats.eventsPerSecond(now),
      totals: stats.changeTotals(),
      recent: stats.recent.list(),
    };
  };
  render = () => {
    const current = state();
    if (current === undefined) return;
    if (!redraw) {
      print(summaryLine(current));
      return;
    }
    if (!running.redrawing) process.stdout.write(HIDE_CURSOR);
    running.redrawing = true;
    process.stdout.write(terminalFrame(screen(current, startedAt), process.stdout.columns ?? 120, process.stdout.rows ?? 40));
  };
  if (!redraw) print(`watching ${name} on ${source}; one line every ${options.refreshMs}ms`);
  running.timers.push(setInterval(render, options.refreshMs));
}

function main(argv: readonly string[]): void {
  if (argv.includes('--replicas') || argv.includes('--child')) {
    replicasMain(argv);
    return;
  }
  let command;
  try {
    command = parseDemoArgs(argv);
  } catch (error) {
    if (!(error instanceof DemoArgsError)) throw error;
    process.stderr.write(`${COMMAND}: ${error.message}\n\n${demoUsage}`);
    process.exit(2);
  }
  if (command.kind === 'help') {
    process.stdout.write(demoUsage);
    return;
  }
  run(command.options).catch((error: unknown) => {
    if (process.stdout.isTTY === true) process.stdout.write(SHOW_CURSOR);
    process.stderr.write(`${COMMAND}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

main(process.argv.slice(2));
