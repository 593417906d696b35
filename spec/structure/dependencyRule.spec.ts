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

function cruise(files: Record<string, string>): { status: number | null; output: string } {
  const root = mkdtempSync(join(tmpdir(), 'depcruise-'));
  try {
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', moduleResolution: 'node', strict: true } }));
    for (const [path, code] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), code);
    }
    const run = spawnSync(process.execPath, [DEPCRUISE, 'lib', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'err'], { cwd: root, encoding: 'utf8' });
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
