/**
 * The benchmark's child processes, as the orchestrators (bench/run.ts, bench/million/run.ts,
 * bench/sharding.ts) drive them: a server in its own process, answering requests in order and
 * relaying the running client's `produce`/`ack` traffic, and a client forked fresh per
 * measurement, settled by its result, its failure, its exit or a timeout.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { ClientCommand, ClientConfig, ClientMessage, ClientResult, ServerReply, ServerRequest } from './protocol';

/** What every benchmark server's messages share: replies to a client, and failures. */
type ServerMessageBase = { readonly type: string } | { readonly type: 'reply'; readonly reply: ServerReply } | { readonly type: 'failed'; readonly message: string };

/**
 * A benchmark server's process (`script`, forked with `execArgv`): `request` sends a command and
 * resolves with the next message that is not a client's reply; `reply` messages go to `client`.
 */
export class ServerChild<Command extends { readonly type: string }, Message extends ServerMessageBase> {
  private readonly child: ChildProcess;
  private readonly waiting: ((message: Message) => void)[] = [];
  /** Where `reply` messages go: the running client. */
  client: ChildProcess | undefined;

  constructor(script: string, execArgv: readonly string[]) {
    this.child = fork(script, [], { execArgv: [...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: Message) => {
      if (message.type === 'reply' && 'reply' in message) {
        this.client?.send({ type: 'reply', reply: message.reply } satisfies ClientCommand);
        return;
      }
      if (message.type === 'failed' && 'message' in message) process.stderr.write(`server failed: ${message.message}\n`);
      this.waiting.shift()?.(message);
    });
  }

  request(command: Command): Promise<Message> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.send(command);
    });
  }

  /** Passes a client's request on (`produce`, `ack`): both servers take it as a `client` command. */
  relayClient(request: ServerRequest): void {
    this.child.send({ type: 'client', request });
  }

  /** Sends `shutdown` and resolves once the process has exited. */
  async shutdown(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'shutdown' });
    await exited;
  }
}

/** A client's outcome: its result, or why there is none. */
export interface ClientOutcome {
  readonly result?: ClientResult;
  readonly error?: string;
}

/**
 * Runs one measurement: the client `config.variant` of the build (`bench/clients/<variant>.js`),
 * forked with `execArgv`, its server requests relayed to `server`. It settles on the client's
 * result or failure, on its exit (the error then quotes the last lines of its stderr that name an
 * error, e.g. V8's heap-limit message) or after `timeoutMs`. A client that reported exits by itself
 * (writing its --cpu-prof profile); one that does not within 10 s, or that failed, is killed.
 */
export function runClientProcess<C extends { readonly type: string }, M extends ServerMessageBase>(server: ServerChild<C, M>, buildDir: string, config: ClientConfig, execArgv: readonly string[], timeoutMs: number): Promise<ClientOutcome> {
  const child = fork(path.join(buildDir, 'bench', 'clients', `${config.variant}.js`), [JSON.stringify(config)], {
    execArgv: [...execArgv],
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
  });
  server.client = child;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ClientOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      server.client = undefined;
      if (child.exitCode !== null || child.signalCode !== null) return resolve(outcome);
      const killer = setTimeout(() => child.kill('SIGKILL'), outcome.result === undefined ? 0 : 10_000);
      child.once('exit', () => {
        clearTimeout(killer);
        resolve(outcome);
      });
    };
    const timer = setTimeout(() => settle({ error: `timed out after ${timeoutMs} ms` }), timeoutMs);
    child.on('message', (message: ClientMessage) => {
      if (message.type === 'server') server.relayClient(message.request);
      else if (message.type === 'result') settle({ result: message.result });
      else settle({ error: message.message });
    });
    child.on('exit', (code, signal) => {
      const lines = stderrTail.split('\n').filter((line) => /error|heap|memory|FATAL/i.test(line));
      settle({ error: `client exited (${signal ?? code}) before reporting${lines.length > 0 ? `: ${lines.slice(-2).join(' | ').trim()}` : ''}` });
    });
  });
}
