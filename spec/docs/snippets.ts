import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { ALL_ENTRY_POINTS, specifierOf } from '../../scripts/entryPoints';

/**
 * Helpers that treat code in the Markdown docs as programs: find the blocks, point their
 * `rx-informer` and `rx-informer-apiserver` imports at this repository's sources, type-check them and run them.
 */

export const REPO = path.resolve(__dirname, '../..');

/**
 * A fenced ```ts block of a Markdown file, with the line it starts on (1-based) for messages, and
 * the project file it shows when a `<!-- file: PATH -->` line comes right before it.
 */
export interface CodeBlock {
  readonly code: string;
  readonly line: number;
  readonly file?: string;
}

/** Every ```ts (or ```typescript) block of a Markdown text, in order. */
export function typeScriptBlocks(markdown: string): CodeBlock[] {
  const fileOf = new Map(fileBlocks(markdown).map((block) => [block.line, block.file]));
  const blocks: CodeBlock[] = [];
  const fence = /^```(?:ts|typescript)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (let match = fence.exec(markdown); match !== null; match = fence.exec(markdown)) {
    const line = markdown.slice(0, match.index).split('\n').length;
    const file = fileOf.get(line);
    blocks.push({ code: match[1] ?? '', line, ...(file === undefined ? {} : { file }) });
  }
  return blocks;
}

/**
 * The blocks (of any language) that a `<!-- file: PATH -->` line right before them marks as a
 * project's file, PATH relative to the project: a tutorial's files, which its project holds word
 * for word and compiles with its own settings.
 */
export function fileBlocks(markdown: string): (CodeBlock & { readonly file: string })[] {
  const blocks: (CodeBlock & { readonly file: string })[] = [];
  const marked = /^<!-- file: (\S+) -->\n```[a-z]*[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  for (let match = marked.exec(markdown); match !== null; match = marked.exec(markdown)) {
    blocks.push({ file: match[1] ?? '', code: match[2] ?? '', line: markdown.slice(0, match.index).split('\n').length + 1 });
  }
  return blocks;
}

/** The ```ts block that follows the `<!-- quickstart` comment; throws when the marker or block is missing. */
export function quickstartBlock(markdown: string): CodeBlock {
  const marker = markdown.indexOf('<!-- quickstart');
  if (marker < 0) throw new Error('README.md has no <!-- quickstart --> marker');
  const after = markdown.slice(marker);
  const block = typeScriptBlocks(after)[0];
  if (block === undefined) throw new Error('no ```ts block after the <!-- quickstart --> marker');
  const between = after.slice(0, after.indexOf('```'));
  if (between.split('\n').length > 3) throw new Error('the quickstart block must follow its marker directly');
  return { code: block.code, line: block.line + markdown.slice(0, marker).split('\n').length - 1 };
}

/** Rewrites the package's import specifiers to this repository's sources, as a user's build resolves them. */
export function againstRepository(code: string): string {
  return code.replace(/from '(rx-informer(?:-apiserver)?(?:\/[a-z-]+)?)'/g, (found, specifier: string) => {
    const entry = ALL_ENTRY_POINTS.find((candidate) => specifierOf(candidate) === specifier);
    return entry === undefined ? found : `from ${JSON.stringify(path.join(REPO, entry.source.replace(/\.ts$/, '')))}`;
  });
}

/** A scratch folder outside the repository whose `node_modules` is the repository's. */
export interface Scratch {
  readonly dir: string;
  write(name: string, code: string): string;
  remove(): void;
}

export function scratchFolder(): Scratch {
  const dir = mkdtempSync(path.join(tmpdir(), 'rx-informer-docs-'));
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return {
    dir,
    write: (name, code) => {
      const file = path.join(dir, name);
      writeFileSync(file, code);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Type-checks files with the repository's compiler options and returns the diagnostics located in
 * those files, as `file:line: message` (the library's own files are `npm test`'s tsc's business).
 * `fragments` allows unused declarations, for snippets that show a value without using it.
 */
export function typeErrors(files: readonly string[], { fragments = false, esModules = false }: { readonly fragments?: boolean; readonly esModules?: boolean } = {}): string[] {
  const configPath = path.join(REPO, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO);
  const options: ts.CompilerOptions = { ...parsed.options, noEmit: true, rootDir: undefined, outDir: undefined, declaration: false, sourceMap: false, types: ['node', 'jest'] };
  if (fragments) Object.assign(options, { noUnusedLocals: false, noUnusedParameters: false });
  if (esModules) Object.assign(options, { module: ts.ModuleKind.ES2022, moduleDetection: ts.ModuleDetectionKind.Force });
  const program = ts.createProgram({ rootNames: [...files], options });
  const errors: string[] = [];
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) {
      errors.push(`${file}: not part of the program`);
      continue;
    }
    for (const diagnostic of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
      errors.push(`${path.basename(file)}:${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
    }
  }
  return errors;
}

/** How a child process ended. */
export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a TypeScript file with ts-node (transpile-only) under this Node binary, killing it after
 * `timeoutMs`. Resolves with its exit and output; never rejects on a non-zero exit.
 */
export function runTypeScript(file: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<RunResult> {
  const tsNode = require.resolve('ts-node/dist/bin.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [tsNode, '--transpile-only', '--project', path.join(REPO, 'tsconfig.json'), file],
      { env: { ...process.env, ...env }, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string | null; signal?: NodeJS.Signals | null }) | null;
        resolve({
          code: failure === null ? 0 : typeof failure.code === 'number' ? failure.code : null,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
  });
}
