import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { statusErrorFromResponse, retryAfterSeconds } from '../../lib/sources/statusError';
import { StatusError } from '../../lib/base/errors';
import { contents, openWatch, pod, runInformer, sendList, startRawApiServer, type RawApiServer, type RunningInformer } from '../badInput/rawApiServer';

/** Every TypeScript file of the library, shipped code only. */
function libraryFiles(directory = path.join(__dirname, '..', '..', 'lib')): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? libraryFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Code, without comments and string contents, so that prose about eval does not count. */
function codeOf(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
    .replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/g, "''");
}

describe('security: nothing from the server is evaluated', () => {
  it('the library has no eval, Function constructor, vm or dynamic require/import', () => {
    // The loopback server's package too: it parses what clients send.
    const files = [...libraryFiles(), ...libraryFiles(path.join(__dirname, '..', '..', 'apiserver', 'src'))];
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.flatMap((file) => {
      const code = codeOf(fs.readFileSync(file, 'utf8'));
      const found = [/\beval\s*\(/, /\bnew\s+Function\s*\(/, /(^|[^.\w])Function\s*\(/, /from\s+'node:vm'|require\(\s*'(node:)?vm'\s*\)/, /\brequire\s*\(\s*[^'"\s)]/, /\bimport\s*\(\s*[^'"\s)]/, /setTimeout\s*\(\s*['"`]/]
        .filter((pattern) => pattern.test(code))
        .map((pattern) => `${path.relative(process.cwd(), file)}: ${pattern}`);
      return found;
    });
    expect(offenders).toEqual([]);
  });

  it('a Retry-After header holding code is read as no delay at all, and never run', () => {
    const marker = path.join(os.tmpdir(), `rx-informer-pwned-${process.pid}`);
    const header = `require('fs').writeFileSync('${marker}', 'x')`;
    expect(retryAfterSeconds(header)).toBeUndefined();
    const error = statusErrorFromResponse(429, { 'retry-after': header }, Buffer.from('Too many requests'));
    expect(error).toBeInstanceOf(StatusError);
    expect(error.retryAfterSeconds).toBeUndefined();
    expect(fs.existsSync(marker)).toBe(false);
  });

  describe('objects whose strings look like code stay strings', () => {
    let server: RawApiServer | undefined;
    let running: RunningInformer | undefined;
    afterEach(async () => {
      running?.stop();
      await server?.close();
    });

    it('caches template literals, script tags and toJSON/then fields as plain data', async () => {
      const marker = path.join(os.tmpdir(), `rx-informer-pwned-${process.pid}`);
      const payload = "${require('fs').writeFileSync('" + marker + "','x')}";
      server = await startRawApiServer({
        list: (_request, response) =>
          sendList(response, [{ ...pod('a', '1', { annotations: { note: payload, html: '<script>alert(1)</script>' } }), toJSON: 'function () { return 1 }', then: 'function (resolve) { resolve(2) }' }], '1'),
        watch: (request, response) => {
          if (request.index === 0) openWatch(response).event('MODIFIED', { ...pod('a', '2', { annotations: { note: payload } }), valueOf: '() => 3' });
          else openWatch(response);
        },
      });
      running = runInformer(server.kubeConfig);
      const snapshot = await running.snapshotWhere((s) => s.get('default/a')?.metadata.resourceVersion === '2');
      expect(contents(snapshot)).toEqual({ 'default/a': '2' });
      expect(snapshot.get('default/a')?.metadata.annotations?.['note']).toBe(payload);
      expect((snapshot.get('default/a') as unknown as { valueOf: unknown }).valueOf).toBe('() => 3');
      expect(fs.existsSync(marker)).toBe(false);
      expect(running.healths.filter((health) => health.lastError !== undefined)).toEqual([]);
    });
  });
});
