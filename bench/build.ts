/**
 * Transpiles lib/, bench/ and apiserver/src once into bench/results/tmp/build, so that each of the many short
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

/** Transpiles every .ts file of lib/, bench/ (results excluded) and apiserver/src; returns the build directory. */
export function buildForBench(): string {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    sourceMap: false,
  };
  const skip = (dir: string): boolean => dir.startsWith(path.join(REPO_ROOT, 'bench', 'results'));
  // The loopback API server's sources too (bench/server.ts and the million run's pod generator use them).
  const sources = [...typeScriptFiles(path.join(REPO_ROOT, 'lib'), skip), ...typeScriptFiles(path.join(REPO_ROOT, 'bench'), skip), ...typeScriptFiles(path.join(REPO_ROOT, 'apiserver', 'src'), skip)];
  const packagePaths = packagePathsOf();
  for (const source of sources) {
    const output = ts.transpileModule(fs.readFileSync(source, 'utf8'), { compilerOptions: options, fileName: source });
    const target = path.join(BUILD_DIR, path.relative(REPO_ROOT, source)).replace(/\.ts$/, '.js');
    // apiserver/ imports rx-informer by its package names: point them at the transpiled lib/, as tsconfig's paths do.
    const text = output.outputText.replace(/require\("(rx-informer[^"]*)"\)/g, (whole, name: string) => {
      const mapped = packagePaths.get(name);
      if (mapped === undefined) return whole;
      const relative = path.relative(path.dirname(target), path.join(BUILD_DIR, mapped)).replace(/\.ts$/, '');
      return `require(${JSON.stringify(relative.startsWith('.') ? relative : `./${relative}`)})`;
    });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
  }
  return BUILD_DIR;
}

/** tsconfig.json's `paths`: each package name of this repository and the source file it stands for. */
function packagePathsOf(): Map<string, string> {
  const { config } = ts.readConfigFile(path.join(REPO_ROOT, 'tsconfig.json'), (file) => fs.readFileSync(file, 'utf8'));
  const paths = (config as { compilerOptions?: { paths?: Record<string, string[]> } }).compilerOptions?.paths ?? {};
  return new Map(Object.entries(paths).flatMap(([name, [file]]) => (file === undefined ? [] : [[name, path.normalize(file)] as [string, string]])));
}
