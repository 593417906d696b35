#!/usr/bin/env node
/**
 * `rx-informer-apiserver`: the loopback Kubernetes API server as a command, with a churning pod
 * population, for demos, kubectl and benchmarks against a live endpoint. `--help` lists the flags.
 */
import { writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import { createChurn, type Churn } from './churn';
import { CliArgsError, parseCliArgs, usage, type CliOptions } from './cliArgs';
import { startApiServer, type ApiServer } from './server';
import { testCertificates } from './tls';

interface WatchEventLine {
  readonly type?: string;
  readonly object?: { readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string }; readonly code?: number };
}

/**
 * A deliberately small pod watch over plain node:http(s), independent of the library's informer:
 * it keeps the set of pod keys, counts events and re-watches from the last resourceVersion when
 * the stream ends (from scratch after a 410).
 */
class PodWatch {
  private readonly keys = new Set<string>();
  private request: http.ClientRequest | undefined;
  private retry: NodeJS.Timeout | undefined;
  private resourceVersion: string | undefined;
  private stopped = false;
  events = 0;
  last = '-';

  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
  ) {}

  get objects(): number {
    return this.keys.size;
  }

  start(): void {
    if (this.stopped) return;
    const rv = this.resourceVersion === undefined ? '' : `&resourceVersion=${encodeURIComponent(this.resourceVersion)}`;
    const target = new URL(`/api/v1/pods?watch=1&allowWatchBookmarks=true${rv}`, this.url);
    const headers: http.OutgoingHttpHeaders = { Accept: 'application/json' };
    if (this.token !== undefined) headers['Authorization'] = `Bearer ${this.token}`;
    const onResponse = (response: http.IncomingMessage): void => this.consume(response);
    const request =
      target.protocol === 'https:'
        ? https.request(target, { headers, ca: testCertificates.caCert }, onResponse)
        : http.request(target, { headers }, onResponse);
    request.on('error', () => this.again(1000));
    request.end();
    this.request = request;
  }

  stop(): void {
    this.stopped = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    this.request?.destroy();
  }

  private consume(response: http.IncomingMessage): void {
    if (response.statusCode !== 200) {
      this.last = `HTTP ${response.statusCode ?? '?'} from the watch`;
      response.resume();
      this.again(1000);
      return;
    }
    response.setEncoding('utf8');
    let buffered = '';
    response.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        this.handle(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    response.on('end', () => this.again(0));
    response.on('error', () => this.again(1000));
  }

  private handle(line: string): void {
    if (line.trim() === '') return;
    let event: WatchEventLine;
    try {
      event = JSON.parse(line) as WatchEventLine;
    } catch {
      this.last = 'unparsable watch line';
      return;
    }
    const metadata = event.object?.metadata;
    if (event.type === 'ERROR') {
      this.last = `ERROR ${event.object?.code ?? '?'}`;
      if (event.object?.code === 410) {
        this.resourceVersion = undefined;
        this.keys.clear();
      }
      return;
    }
    this.events++;
    if (metadata?.resourceVersion !== undefined) this.resourceVersion = metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    const key = `${metadata?.namespace ?? ''}/${metadata?.name ?? ''}`;
    if (event.type === 'DELETED') this.keys.delete(key);
    else this.keys.add(key);
    this.last = `${event.type ?? '?'} ${key} rv=${metadata?.resourceVersion ?? '?'}`;
  }

  private again(delayMs: number): void {
    this.request = undefined;
    if (this.stopped || this.retry !== undefined) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start();
    }, delayMs);
  }
}

/** What a run has started so far; shutdown releases whatever is there. */
interface Running {
  server?: ApiServer;
  churn?: Churn;
  watch?: PodWatch;
  readonly timers: NodeJS.Timeout[];
}

async function run(options: CliOptions): Promise<void> {
  const running: Running = { timers: [] };
  let stopping = false;
  const shutdown = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    running.churn?.stop();
    running.watch?.stop();
    for (const timer of running.timers) clearTimeout(timer);
    await running.server?.close();
    const { creates, updates, deletes } = running.churn?.stats ?? { creates: 0, updates: 0, deletes: 0 };
    console.log(`stopped (${why}): ${creates} creates, ${updates} updates, ${deletes} deletes`);
    process.exit(0);
  };
  // Handlers go in before anything is printed: a signal sent on seeing the URL must find them.
  // A second signal while closing means "now": skip the graceful close.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1);
    void shutdown(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const server = await startApiServer({
    host: options.host,
    port: options.port,
    tls: options.tls,
    serverVersion: options.serverVersion,
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  running.server = server;
  if (stopping) return;
  const churn = createChurn(server.store, {
    seed: options.seed,
    namespaces: options.namespaces,
    pods: options.pods,
    managedFields: options.managedFields,
    createsPerSecond: options.churn / 10,
    updatesPerSecond: (options.churn * 8) / 10,
    deletesPerSecond: options.churn / 10,
  });
  running.churn = churn;
  churn.populate();
  churn.start();
  if (options.kubeconfigOut !== undefined) writeFileSync(options.kubeconfigOut, server.kubeConfig.exportConfig(), { mode: 0o600 });
  console.log(`rx-informer-apiserver listening on ${server.url} (Kubernetes ${server.profile.version})`);
  console.log(`${options.pods} pods in ${options.namespaces} namespace${options.namespaces === 1 ? '' : 's'}, churn ${options.churn}/s (seed ${options.seed})`);
  if (options.kubeconfigOut !== undefined) console.log(`kubeconfig written: kubectl --kubeconfig ${options.kubeconfigOut} get pods -A`);

  if (options.watch) {
    const watch = new PodWatch(server.url, options.token);
    running.watch = watch;
    watch.start();
    let eventsAtLastTick = 0;
    running.timers.push(
      setInterval(() => {
        const perSecond = watch.events - eventsAtLastTick;
        eventsAtLastTick = watch.events;
        console.log(`watch: objects=${watch.objects} events/s=${perSecond} last=${watch.last}`);
      }, 1000),
    );
  }
  if (options.durationSeconds !== undefined) running.timers.push(setTimeout(() => void shutdown('duration reached'), options.durationSeconds * 1000));
}

function main(argv: readonly string[]): void {
  let command;
  try {
    command = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof CliArgsError)) throw error;
    process.stderr.write(`rx-informer-apiserver: ${error.message}\n\n${usage}`);
    process.exit(2);
  }
  if (command.kind === 'help') {
    process.stdout.write(usage);
    return;
  }
  run(command.options).catch((error: unknown) => {
    process.stderr.write(`rx-informer-apiserver: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

main(process.argv.slice(2));
