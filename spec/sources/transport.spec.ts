import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError, NetworkError, ProtocolError, type InformerError } from '../../lib/base/errors';
import { inContext, kubeRequest, readBody, readText, responseBody, toReadError } from '../../lib/sources/transport';
import { testCertificates } from '../../apiserver/src/tls';
import { EVENTUALLY_MS, within } from '../support/eventually';
import { kubeConfigFor, sendJson, startProxy, startServer, tokenForTests, type TestServer } from './support';
import type { KubeConfig } from '@kubernetes/client-node';

const base64 = (text: string): string => Buffer.from(text).toString('base64');

async function get(kubeConfig: KubeConfig, requestPath = '/api/v1/pods', query = ''): Promise<{ status: number; body: string }> {
  const response = await kubeRequest(kubeConfig, { path: requestPath, query, signal: new AbortController().signal });
  const body = await readBody(response, requestPath);
  return { status: response.statusCode ?? 0, body: body.toString('utf8') };
}

async function failure(promise: Promise<unknown>): Promise<InformerError> {
  try {
    await promise;
  } catch (error) {
    return error as InformerError;
  }
  throw new Error('expected a failure');
}

describe('kubeRequest', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  it('sends the bearer token and asks for JSON below the server URL path', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { ok: true }));
    const kubeConfig = kubeConfigFor({ server: `${server.url}/clusters/one/`, user: { token: tokenForTests } });
    const answer = await get(kubeConfig, '/api/v1/namespaces/a/pods', 'limit=5');
    expect(answer).toEqual({ status: 200, body: '{"ok":true}' });
    const seen = await server.request(0);
    expect(seen.method).toBe('GET');
    expect(seen.path).toBe('/clusters/one/api/v1/namespaces/a/pods');
    expect(seen.query.get('limit')).toBe('5');
    expect(seen.headers.authorization).toBe(`Bearer ${tokenForTests}`);
    expect(seen.headers.accept).toBe('application/json');
  });

  it('talks plain http when the server URL says so, even without insecure-skip-tls-verify', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const kubeConfig = kubeConfigFor({ server: server.url, cluster: { skipTLSVerify: false }, user: { token: tokenForTests } });
    expect((await get(kubeConfig)).status).toBe(200);
    expect((await server.request(0)).headers.authorization).toBe(`Bearer ${tokenForTests}`);
  });

  it('verifies an https server against the kubeconfig CA data', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}), { tls: true });
    const kubeConfig = kubeConfigFor({ server: server.url, cluster: { caData: base64(testCertificates.caCert) }, user: { token: tokenForTests } });
    expect((await get(kubeConfig)).status).toBe(200);
  });

  it('rejects an https server its CA does not vouch for, with a NetworkError free of credentials', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}), { tls: true });
    const kubeConfig = kubeConfigFor({ server: server.url, user: { token: tokenForTests } });
    const error = await failure(get(kubeConfig));
    expect(error).toBeInstanceOf(NetworkError);
    expect(JSON.stringify({ message: error.message, stack: error.stack })).not.toContain(tokenForTests);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps the client key out of a TLS failure', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}), { tls: true, requestCert: true });
    const kubeConfig = kubeConfigFor({
      server: server.url,
      user: { certData: base64(testCertificates.clientCert), keyData: base64(testCertificates.clientKey) },
    });
    const error = await failure(get(kubeConfig));
    expect(error).toBeInstanceOf(NetworkError);
    const keyLine = testCertificates.clientKey.split('\n')[1] as string;
    expect(`${error.message} ${String(error.stack)} ${JSON.stringify(error)} ${String((error.cause as Error | undefined)?.message)}`).not.toContain(keyLine);
  });

  it('reaches a server at an IPv6 literal address', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { v6: true }), { host: '::1' });
    expect(server.url.startsWith('http://[::1]:')).toBe(true);
    expect((await get(kubeConfigFor({ server: server.url }))).body).toBe('{"v6":true}');
  });

  it('skips server verification when insecure-skip-tls-verify is set', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}), { tls: true });
    const kubeConfig = kubeConfigFor({ server: server.url, cluster: { skipTLSVerify: true }, user: { token: tokenForTests } });
    expect((await get(kubeConfig)).status).toBe(200);
  });

  it('authenticates with the client certificate and key of the kubeconfig user', async () => {
    let subject = '';
    server = await startServer(
      (req, res) => {
        subject = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN);
        sendJson(res, 200, {});
      },
      { tls: true, requestCert: true },
    );
    const kubeConfig = kubeConfigFor({
      server: server.url,
      cluster: { caData: base64(testCertificates.caCert) },
      user: { certData: base64(testCertificates.clientCert), keyData: base64(testCertificates.clientKey) },
    });
    expect((await get(kubeConfig)).status).toBe(200);
    expect(subject).toBe('rx-informer-test-user');
  });

  it('runs the exec credential plugin per request, so rotated tokens are used', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-informer-exec-'));
    try {
      const script = path.join(dir, 'plugin.js');
      fs.writeFileSync(
        script,
        `const fs = require('fs'); const f = ${JSON.stringify(path.join(dir, 'n'))};
         const n = fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8')) + 1 : 1; fs.writeFileSync(f, String(n));
         console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',
           status: { token: 'rotated-' + n, expirationTimestamp: '2000-01-01T00:00:00Z' } }));`,
      );
      const kubeConfig = kubeConfigFor({
        server: server.url,
        user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [script] } },
      });
      await get(kubeConfig);
      await get(kubeConfig);
      expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer rotated-1', 'Bearer rotated-2']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends the OIDC id-token of an oidc auth provider while it is unexpired', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const idToken = `${part({ alg: 'none' })}.${part({ exp: 4102444800, sub: 'me' })}.sig`;
    const kubeConfig = kubeConfigFor({
      server: server.url,
      user: { authProvider: { name: 'oidc', config: { 'id-token': idToken, 'client-id': 'kube', 'idp-issuer-url': 'https://issuer.invalid' } } },
    });
    await get(kubeConfig);
    expect((await server.request(0)).headers.authorization).toBe(`Bearer ${idToken}`);
  });

  it('tunnels through the proxy the kubeconfig names, for http servers', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { via: 'proxy' }));
    const proxy = await startProxy(server.url);
    try {
      const kubeConfig = kubeConfigFor({
        server: 'http://kubernetes.invalid:6443',
        cluster: { proxyUrl: proxy.url, skipTLSVerify: true },
        user: { token: tokenForTests },
      });
      expect((await get(kubeConfig)).body).toBe('{"via":"proxy"}');
      expect(proxy.connects).toEqual(['kubernetes.invalid:6443']);
      expect((await server.request(0)).headers.authorization).toBe(`Bearer ${tokenForTests}`);
    } finally {
      await proxy.close();
    }
  });

  it('tunnels through the proxy the kubeconfig names, for https servers, verifying the server', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, { via: 'proxy' }), { tls: true });
    const proxy = await startProxy(server.url);
    try {
      const kubeConfig = kubeConfigFor({
        server: 'https://localhost:6443',
        cluster: { proxyUrl: proxy.url, caData: base64(testCertificates.caCert) },
        user: { token: tokenForTests },
      });
      expect((await get(kubeConfig)).body).toBe('{"via":"proxy"}');
      expect(proxy.connects).toEqual(['localhost:6443']);
    } finally {
      await proxy.close();
    }
  });

  it('uses a named context through inContext without changing the kubeconfig', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const kubeConfig = kubeConfigFor({
      server: 'http://127.0.0.1:1',
      extraClusters: [{ name: 'other', server: server.url }],
      extraUsers: [{ name: 'other-user', token: 'other-token' }],
      extraContexts: [{ name: 'other-ctx', cluster: 'other', user: 'other-user' }],
    });
    expect((await get(inContext(kubeConfig, 'other-ctx'))).status).toBe(200);
    expect((await server.request(0)).headers.authorization).toBe('Bearer other-token');
    expect(kubeConfig.getCurrentContext()).toBe('ctx');
  });

  it('fails with NetworkError ECONNREFUSED when nothing listens', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, {}));
    const url = server.url;
    await server.close();
    const error = await failure(get(kubeConfigFor({ server: url, user: { token: tokenForTests } })));
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).code).toBe('ECONNREFUSED');
    expect(error.message).not.toContain(tokenForTests);
  });

  it('destroys the request when its signal aborts', async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders());
    const controller = new AbortController();
    const response = await kubeRequest(kubeConfigFor({ server: server.url }), { path: '/api/v1/pods', query: 'watch=1', signal: controller.signal });
    response.on('error', () => undefined);
    controller.abort();
    await within((await server.request(0)).closed, EVENTUALLY_MS, 'the server to see the aborted request’s connection close');
    expect(response.destroyed).toBe(true);
  });

  describe('kubeconfig problems become ConfigError', () => {
    const cases: [string, () => KubeConfig, ConfigError['problem']][] = [
      ['no current context', () => kubeConfigFor({ server: 'http://127.0.0.1:1', currentContext: '' }), 'no-current-context'],
      ['a current context that does not exist', () => kubeConfigFor({ server: 'http://127.0.0.1:1', currentContext: 'nope' }), 'missing-context'],
      ['a named context that does not exist', () => inContext(kubeConfigFor({ server: 'http://127.0.0.1:1' }), 'nope'), 'missing-context'],
      [
        'a context naming a missing cluster',
        () => kubeConfigFor({ server: 'http://127.0.0.1:1', currentContext: 'x', extraContexts: [{ name: 'x', cluster: 'gone', user: 'u' }] }),
        'missing-cluster',
      ],
      [
        'a context naming a missing user',
        () => kubeConfigFor({ server: 'http://127.0.0.1:1', currentContext: 'x', extraContexts: [{ name: 'x', cluster: 'c', user: 'gone' }] }),
        'missing-user',
      ],
      ['a server URL that does not parse', () => kubeConfigFor({ server: 'not a url' }), 'invalid-server-url'],
      ['a server URL of another scheme', () => kubeConfigFor({ server: 'ftp://127.0.0.1' }), 'invalid-server-url'],
      ['a CA file that cannot be read', () => kubeConfigFor({ server: 'https://127.0.0.1:1', cluster: { caFile: '/nonexistent/ca.crt' } }), 'unreadable-file'],
      [
        'a credential plugin that fails',
        () => kubeConfigFor({ server: 'http://127.0.0.1:1', user: { exec: { command: process.execPath, args: ['-e', 'process.exit(3)'] } } }),
        'credential-plugin-failed',
      ],
      [
        'a credential plugin that is missing',
        () => kubeConfigFor({ server: 'http://127.0.0.1:1', user: { exec: { command: '/nonexistent/plugin' } } }),
        'credential-plugin-failed',
      ],
    ];
    it.each(cases)('%s', async (_name, makeConfig, problem) => {
      const error = await failure(get(makeConfig()));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problem).toBe(problem);
    });

    it('a credential plugin that prints a token in garbage output: the token stays out of the error', async () => {
      const script = `console.log('{"status":{"token":"${tokenForTests}"'); process.stderr.write('Bearer ${tokenForTests}')`;
      const kubeConfig = kubeConfigFor({ server: 'http://127.0.0.1:1', user: { exec: { command: process.execPath, args: ['-e', script] } } });
      const error = await failure(get(kubeConfig));
      expect(error).toMatchObject({ kind: 'config', problem: 'credential-plugin-failed' });
      expect(`${error.message} ${String(error.stack)} ${String(error.cause)}`).not.toContain(tokenForTests);
    });

    it('a credential plugin failing with the token on stderr: the token stays out of the error', async () => {
      const script = `process.stderr.write('could not refresh: Authorization: Bearer ${tokenForTests}'); process.exit(1)`;
      const kubeConfig = kubeConfigFor({ server: 'http://127.0.0.1:1', user: { exec: { command: process.execPath, args: ['-e', script] } } });
      const error = await failure(get(kubeConfig));
      expect(error).toMatchObject({ kind: 'config', problem: 'credential-plugin-failed' });
      expect(error.message).toContain('could not refresh');
      expect(`${error.message} ${String(error.stack)} ${String(error.cause)}`).not.toContain(tokenForTests);
    });
  });
});

describe('compression', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  const open = async (write: (res: ServerResponse) => void, compression?: boolean): Promise<IncomingMessage> => {
    server = await startServer((_req, res) => write(res));
    return kubeRequest(kubeConfigFor({ server: server.url }), { path: '/api/v1/pods', query: '', signal: new AbortController().signal, compression });
  };
  const readAll = (body: NodeJS.ReadableStream): Promise<string> =>
    new Promise((resolve, reject) => {
      let text = '';
      body.setEncoding('utf8');
      body.on('data', (chunk: string) => (text += chunk));
      body.on('end', () => resolve(text));
      body.on('error', reject);
    });

  it('asks for gzip by default, as client-go does, and not when compression is off', async () => {
    const response = await open((res) => sendJson(res, 200, {}));
    await readBody(response, '/api/v1/pods');
    const off = await kubeRequest(kubeConfigFor({ server: server.url }), { path: '/api/v1/pods', query: '', signal: new AbortController().signal, compression: false });
    await readBody(off, '/api/v1/pods');
    expect(server.requests.map((seen) => seen.headers['accept-encoding'])).toEqual(['gzip', undefined]);
  });

  it('decompresses a gzip body as it arrives: what one flush holds is readable before the rest is sent', async () => {
    let sendRest: () => void = () => undefined;
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = zlib.createGzip();
      gzip.pipe(res);
      gzip.write('{"first":1,');
      gzip.flush(zlib.constants.Z_SYNC_FLUSH);
      sendRest = () => gzip.end('"second":2}');
    });
    const body = responseBody(response, '/api/v1/pods');
    body.setEncoding('utf8');
    const first = await within(new Promise<string>((resolve) => body.once('data', resolve)), EVENTUALLY_MS, 'the first flush of the gzip body, readable before the rest is sent');
    expect(first).toBe('{"first":1,');
    const rest = readAll(body);
    sendRest();
    expect(await rest).toBe('"second":2}');
  });

  it('decodes a body of several gzip members, as the API server writes a compressed watch (one member per flush)', async () => {
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.write(zlib.gzipSync('{"type":"ADDED"}\n'));
      res.end(zlib.gzipSync('{"type":"BOOKMARK"}\n'));
    });
    expect(await readAll(responseBody(response, '/api/v1/pods'))).toBe('{"type":"ADDED"}\n{"type":"BOOKMARK"}\n');
  });

  it('passes the body through when the server ignores the request (no Content-Encoding, or identity)', async () => {
    const plain = await open((res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}'));
    expect(await readAll(responseBody(plain, '/api/v1/pods'))).toBe('{"a":1}');
    await server.close();
    const identity = await open((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'identity' }).end('{"b":2}'));
    expect(await readAll(responseBody(identity, '/api/v1/pods'))).toBe('{"b":2}');
  });

  it.each([
    ['corrupt gzip', (res: ServerResponse) => res.end(Buffer.from('this is not gzip'))],
    ['gzip cut short', (res: ServerResponse) => res.end(zlib.gzipSync('{"items":[]}').subarray(0, 12))],
  ])('fails with ProtocolError non-json-body for %s', async (_name, write) => {
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      write(res);
    });
    const error = await failure(readAll(responseBody(response, '/api/v1/pods')).catch((e: unknown) => Promise.reject(toReadError(e, '/api/v1/pods'))));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).problem).toBe('non-json-body');
    expect(error.message).toContain('gzip');
  });

  it('fails with a NetworkError when the connection breaks inside a gzip body', async () => {
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.write(zlib.gzipSync('{"items":[').subarray(0, 15));
      setTimeout(() => res.destroy(), 20);
    });
    const error = await failure(readAll(responseBody(response, '/api/v1/pods')).catch((e: unknown) => Promise.reject(toReadError(e, '/api/v1/pods'))));
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('fails with ProtocolError for an encoding it was not asked for and cannot undo', async () => {
    const response = await open((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' }).end('xx'));
    expect(() => responseBody(response, '/api/v1/pods')).toThrow(ProtocolError);
    expect(response.destroyed).toBe(true);
  });

  it('decodes a gzip error body, and reads one in an unknown encoding as it is', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403 };
    const gzip = await open((res) => res.writeHead(403, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync(JSON.stringify(status))));
    expect(JSON.parse((await readBody(gzip, '/api/v1/pods')).toString())).toEqual(status);
    await server.close();
    const odd = await open((res) => res.writeHead(500, { 'content-encoding': 'br' }).end('oops'));
    expect((await readBody(odd, '/api/v1/pods')).toString()).toBe('oops');
  });
});

describe('readText', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  const open = async (write: (res: ServerResponse) => void): Promise<IncomingMessage> => {
    server = await startServer((_req, res) => write(res));
    return kubeRequest(kubeConfigFor({ server: server.url }), { path: '/api/v1/pods', query: '', signal: new AbortController().signal });
  };

  it('keeps a multi-byte character whole when it is split across chunks', async () => {
    const bytes = Buffer.from('{"name":"café ☸"}');
    const split = bytes.indexOf(Buffer.from('☸')) + 1; // inside the three bytes of ☸
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(bytes.subarray(0, split));
      setTimeout(() => res.end(bytes.subarray(split)), 20);
    });
    expect(await readText(response, '/api/v1/pods', 1000)).toBe('{"name":"café ☸"}');
  });

  it('fails with ProtocolError body-too-large past maxChars and drops the connection', async () => {
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('x'.repeat(600));
      res.write('y'.repeat(600)); // never ended: only the limit can settle the read
    });
    const error = await failure(readText(response, '/api/v1/pods', 1000));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).problem).toBe('body-too-large');
    expect(response.destroyed).toBe(true);
  });

  it('fails with a NetworkError when the connection closes before the body ends', async () => {
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"items":[');
      setTimeout(() => res.destroy(), 20);
    });
    const error = await failure(readText(response, '/api/v1/pods', 1000));
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('decompresses a gzip body', async () => {
    const response = await open((res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync('{"kind":"Lease"}')));
    expect(await readText(response, '/api/v1/pods', 1000)).toBe('{"kind":"Lease"}');
  });
});
