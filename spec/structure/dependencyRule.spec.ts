import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The dependency rule of lib/ (.dependency-cruiser.cjs), held against a small tree that breaks
 * it on purpose: `npm run check:imports` must fail there, naming each rule, so that a contributor
 * who adds a back-up import or a circle learns it from the check, not from review.
 */
const REPO = join(__dirname, '..', '..');
const DEPCRUISE = join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');

/** `rx-informer` and its subpaths mapped onto lib/ by tsconfig `paths`, as the repository's tsconfig.json does. */
const PATHS = { 'rx-informer': ['./lib/index.ts'], 'rx-informer/pipeline': ['./lib/pipeline.ts'] };

function cruise(files: Record<string, string>, folders: readonly string[] = ['lib']): { status: number | null; output: string } {
  const root = mkdtempSync(join(tmpdir(), 'depcruise-'));
  try {
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node', strict: true, paths: PATHS } }));
    for (const [path, code] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), code);
    }
    const run = spawnSync(process.execPath, [DEPCRUISE, ...folders, '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd: root, encoding: 'utf8' });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('the dependency rule of lib/', () => {
  it('passes a tree whose stages import only earlier stages', () => {
    const result = cruise({
      'lib/base/errors.ts': 'export class Failure extends Error {}\n',
      'lib/store/snapshot.ts': "import { Failure } from '../base/errors';\nexport const make = (): Failure => new Failure();\n",
      'lib/handlers/handle.ts': "import { make } from '../store/snapshot';\nexport const handle = make;\n",
    });
    expect(result.output).toContain('no dependency violations found');
    expect(result.status).toBe(0);
  });

  it('fails an import from a stage to a later one, naming the rule and the import', () => {
    const result = cruise({
      'lib/handlers/queue.ts': 'export const depth = 1;\n',
      'lib/store/reducer.ts': "import { depth } from '../handlers/queue';\nexport const reduced = depth;\n",
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('stage-order: store imports no later stage');
    expect(result.output).toContain('lib/store/reducer.ts → lib/handlers/queue.ts');
  });

  it('fails a circle of type-only imports inside one stage', () => {
    const result = cruise({
      'lib/store/change.ts': "import type { Mark } from './mark';\nexport interface Change { readonly mark?: Mark }\n",
      'lib/store/mark.ts': "import type { Change } from './change';\nexport interface Mark { readonly change: Change }\n",
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('no-circular');
  });

  it('fails a stage that imports the root entry', () => {
    const result = cruise({
      'lib/index.ts': "export { handle } from './handlers/handle';\n",
      'lib/handlers/handle.ts': "import type {} from '../index';\nexport const handle = 1;\n",
    });
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('a stage never imports the root entry');
  });
});

describe('the dependency rule of the apiserver package', () => {
  const library = {
    'lib/index.ts': "export { Failure } from './base/errors';\n",
    'lib/pipeline.ts': "export { source } from './sources/source';\n",
    'lib/base/errors.ts': 'export class Failure extends Error {}\n',
    'lib/sources/source.ts': 'export const source = 1;\n',
  };
  const both = ['lib', 'apiserver/src'];

  it("passes a server that imports rx-informer's entry points by name", () => {
    const result = cruise(
      {
        ...library,
        'apiserver/src/server.ts': "import { Failure } from 'rx-informer';\nimport { source } from 'rx-informer/pipeline';\nexport const fail = (): Failure => new Failure(String(source));\n",
      },
      both,
    );
    expect(result.output).toContain('no dependency violations found');
    expect(result.status).toBe(0);
  });

  it('fails a server file that imports lib/ by path, even an entry point', () => {
    const result = cruise({ ...library, 'apiserver/src/server.ts': "import { Failure } from '../../lib/index';\nexport const fail = (): Failure => new Failure();\n" }, both);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('apiserver: rx-informer by name, never lib/ by path');
    expect(result.output).toContain('apiserver/src/server.ts → lib/index.ts');
  });

  it('fails a server file that reaches a lib/ file no entry point is', () => {
    const result = cruise({ ...library, 'apiserver/src/server.ts': "import { source } from '../../lib/sources/source';\nexport const s = source;\n" }, both);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("apiserver: only rx-informer's public entry points");
  });

  it('fails a circle inside the server', () => {
    const result = cruise(
      {
        ...library,
        'apiserver/src/a.ts': "import { b } from './b';\nexport const a = (): number => b();\n",
        'apiserver/src/b.ts': "import { a } from './a';\nexport const b = (): number => a();\n",
      },
      both,
    );
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('no-circular');
    expect(result.output).toContain('apiserver/src/a.ts');
  });

  it('fails lib/ importing the server', () => {
    const result = cruise({ ...library, 'apiserver/src/server.ts': 'export const port = 0;\n', 'lib/sources/source.ts': "import { port } from '../../apiserver/src/server';\nexport const source = port;\n" }, both);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain('lib/ never imports the apiserver package');
  });
});
