import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { Subscription } from 'rxjs';
import { informer } from '../../lib/informer/informer';
import type { Logger } from '../../lib/base/logger';
import { pods } from '../../lib/resources/builtins';
import { loadClientNode, startApiServer, testCertificates, type ApiServer } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { describeEachServerVersion } from '../support/serverVersions';
import { eventually } from '../support/eventually';

/**
 * Credentials never leak into what the library emits. Every message it produces (health$
 * reports with their errors, causes and stacks, log lines with their fields, waitForSync
 * rejections, handler events) is collected in full and grepped for the secrets.
 */

const SERVER_TOKEN = 'srv-token-4e1b0c7d9a';
const WRONG_TOKEN = 'wrong-token-7c2e5f1a88';
const PLUGIN_TOKEN = 'plugin-token-0d3f6b2c15';
const KEY_BODY_LINES = testCertificates.clientKey.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));
const SECRETS = [SERVER_TOKEN, WRONG_TOKEN, PLUGIN_TOKEN, ...KEY_BODY_LINES];

/** Everything an informer emitted, rendered as text (errors with cause chains, stacks and own fields). */
class Transcript {
  private readonly parts: string[] = [];
  readonly logger: Logger = {
    debug: (fields, message) => this.add(message, fields),
    info: (fields, message) => this.add(message, fields),
    warn: (fields, message) => this.add(message, fields),
    error: (fields, message) => this.add(message, fields),
  };

  add(...values: unknown[]): void {
    for (const value of values) {
      this.parts.push(typeof value === 'string' ? value : inspect(value, { depth: 12, showHidden: false, getters: true, maxStringLength: Infinity, maxArrayLength: Infinity }));
      if (value instanceof Error) this.parts.push(String(value.stack), JSON.stringify(value, Object.getOwnPropertyNames(value)));
    }
  }

  get text(): string {
    return this.parts.join('\n');
  }

  get size(): number {
    return this.parts.length;
  }
}

function kubeConfigOf(cluster: { server: string; caData?: string }, user: Record<string, unknown>): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', skipTLSVerify: false, ...cluster }],
    users: [{ name: 'u', ...user }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kubeConfig;
}

/** Runs an informer through `kubeConfig` while `provoke` makes things fail; records everything it emits. */
async function transcriptOf(kubeConfig: KubeConfig, provoke: (server: ApiServer) => void | Promise<void>, server: ApiServer): Promise<Transcript> {
  const transcript = new Transcript();
  const podInformer = informer(kubeConfig, pods, { logger: transcript.logger, backoff: { initialMs: 5, maxMs: 20, jitter: 'none' } });
  const subscriptions = new Subscription();
  subscriptions.add(podInformer.health$.subscribe((health) => transcript.add(health, health.lastError)));
  subscriptions.add(podInformer.informer$.subscribe({ error: (error: unknown) => transcript.add('informer$ error', error) }));
  subscriptions.add(podInformer.handle({ onAdd: () => { throw new Error('handler failure'); } }).subscribe((event) => transcript.add(event)));
  await waitForSync([podInformer], { timeout: 400 }).then(
    () => transcript.add('synced'),
    (error: unknown) => transcript.add('waitForSync rejected', error),
  );
  await provoke(server);
  subscriptions.unsubscribe();
  return transcript;
}

function expectNoSecrets(transcript: Transcript): void {
  expect(transcript.size).toBeGreaterThan(5);
  for (const secret of SECRETS) expect(transcript.text).not.toContain(secret);
  expect(transcript.text).not.toMatch(/PRIVATE KEY/);
  expect(transcript.text).not.toMatch(/authorization["']?\s*[:=]\s*["']?bearer\s+(?!\[redacted\])\S/i);
  expect(transcript.text).not.toMatch(/bearer\s+(?!\[redacted\])[A-Za-z0-9._-]{8,}/i);
}

/** Lets a burst of faults play out: each rotation of the short backoff meets one. */
async function faultStorm(server: ApiServer): Promise<void> {
  server.faults.inject({ kind: 'status', code: 500, message: 'etcd leader changed' }, { verb: 'watch', times: 2 });
  server.faults.inject({ kind: 'plainText429', retryAfterSeconds: 0 }, { verb: 'watch', times: 1 });
  server.faults.inject({ kind: 'garbageLine', afterEvents: 0 }, { verb: 'watch', times: 1 });
  server.store.create(pods, { metadata: { name: 'trigger', namespace: 'default' } });
  server.faults.inject({ kind: 'cutMidLine', afterEvents: 0 }, { verb: 'watch', times: 1 });
  await server.restart();
  // The storm must have played out, or the transcript's silence about secrets would prove nothing.
  await eventually(() => expect(server.requests.entries.filter((r) => r.fault !== undefined).length).toBeGreaterThanOrEqual(4), { timeoutMs: 3000, intervalMs: 20 });
  server.store.create(pods, { metadata: { name: 'after', namespace: 'default' } });
}

describeEachServerVersion('security: credentials never appear in errors, logs or health$', (serverVersion) => {
  let server: ApiServer | undefined;
  let directory: string;
  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-informer-secrets-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('a wrong bearer token: the 401 is reported, the tokens are not', async () => {
    server = await startApiServer({ serverVersion, token: SERVER_TOKEN });
    const transcript = await transcriptOf(kubeConfigOf({ server: server.url }, { token: WRONG_TOKEN }), () => undefined, server);
    expect(transcript.text).toMatch(/401/);
    expectNoSecrets(transcript);
  });

  it('the right bearer token through a storm of 500s, 429s, garbage, cuts and a restart: none of it carries the token', async () => {
    server = await startApiServer({ serverVersion, token: SERVER_TOKEN });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'default' } });
    const transcript = await transcriptOf(kubeConfigOf({ server: server.url }, { token: SERVER_TOKEN }), faultStorm, server);
    expect(transcript.text).toMatch(/etcd leader changed/);
    expect(transcript.text).toMatch(/ECONNRESET|malformed|not JSON/);
    expectNoSecrets(transcript);
  });

  it('a client certificate and key over TLS, through the same storm: the key never appears', async () => {
    server = await startApiServer({ serverVersion, tls: true, token: SERVER_TOKEN });
    server.store.create(pods, { metadata: { name: 'a', namespace: 'default' } });
    const kubeConfig = kubeConfigOf(
      { server: server.url, caData: Buffer.from(testCertificates.caCert).toString('base64') },
      { certData: Buffer.from(testCertificates.clientCert).toString('base64'), keyData: Buffer.from(testCertificates.clientKey).toString('base64') },
    );
    const transcript = await transcriptOf(kubeConfig, faultStorm, server);
    expect(transcript.text).toMatch(/etcd leader changed/);
    expectNoSecrets(transcript);
  });

  it('a credential plugin that fails and prints the token and an Authorization header: neither is repeated', async () => {
    server = await startApiServer({ serverVersion, token: SERVER_TOKEN });
    const plugin = path.join(directory, 'plugin.sh');
    fs.writeFileSync(plugin, `#!/bin/sh\necho "refresh failed: Authorization: Bearer ${PLUGIN_TOKEN}" >&2\necho "token=${PLUGIN_TOKEN}" >&2\nexit 1\n`, { mode: 0o755 });
    const transcript = await transcriptOf(kubeConfigOf({ server: server.url }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } }), () => undefined, server);
    expect(transcript.text).toMatch(/credential/);
    expectNoSecrets(transcript);
  });

  it('the check is not vacuous: it would catch a token in a message', () => {
    const transcript = new Transcript();
    for (let i = 0; i < 6; i++) transcript.add(new Error(`GET /api/v1/pods failed with Authorization: Bearer ${SERVER_TOKEN}`));
    expect(() => expectNoSecrets(transcript)).toThrow();
  });
});
