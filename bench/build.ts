/**
 * Transpiles lib/ and bench/ once into bench/results/tmp/build, so that each of the many short
 * client processes starts in a fraction of a second instead of running ts-node's compiler again.
 * Type checking is `npm run typecheck`'s job; this is a plain per-file transpile.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const REPO_ROOT = path.resolve(__dirname, '..');
export const BUILD_DIR = path.join(REPO_ROOT, 'bench', 'results', 'tmp', 'build');

function typeScriptFiles(dir: string, skip: (dir: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skip(full)) out.push(...typeScriptFiles(full, skip));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** Transpiles every .ts file of lib/ and bench/ (results excluded); returns the build directory. */
export function buildForBench(): string {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    sourceMap: false,
  };
  const skip = (dir: string): boolean => dir.startsWith(path.join(REPO_ROOT, 'bench', 'results'));
  const sources = [...typeScriptFiles(path.join(REPO_ROOT, 'lib'), skip), ...typeScriptFiles(path.join(REPO_ROOT, 'bench'), skip)];
  for (const source of sources) {
    const output = ts.transpileModule(fs.readFileSync(source, 'utf8'), { compilerOptions: options, fileName: source });
    const target = path.join(BUILD_DIR, path.relative(REPO_ROOT, source)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, output.outputText);
  }
  return BUILD_DIR;
}
