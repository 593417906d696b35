import * as path from 'node:path';
import * as ts from 'typescript';
import { ALL_ENTRY_POINTS, specifierOf } from '../../scripts/entryPoints';
import { REPO, typeScriptBlocks, type CodeBlock } from './snippets';

/**
 * The `## Example` sections of the JSDoc of the packages' public exports, found the way TypeDoc
 * and api-extractor find the exports: from each entry point's module, through re-exports, to the
 * declarations (and the members of exported classes and interfaces).
 */

/** One ```ts block of an `## Example` section, with where it is documented. */
export interface JsDocExample {
  /** The import specifier of the entry point that exports it: `rx-informer`, `rx-informer/pipeline`, ... */
  readonly specifier: string;
  /** The exported name, or `Name.member` for a member of an exported class or interface. */
  readonly name: string;
  /** The source file, relative to the repository, and the 1-based line the block starts on. */
  readonly file: string;
  readonly line: number;
  /** Its position among the example blocks of this name (0-based), to tell several apart. */
  readonly ordinal: number;
  readonly code: string;
}

/** A JSDoc comment with its `/**`, `*` margins and `*\/` removed, line for line. */
export function commentText(raw: string): string {
  return raw
    .split('\n')
    .map((line) => line.replace(/^\s*\/\*\*\s?/, '').replace(/\s*\*\/\s*$/, '').replace(/^\s*\* ?/, ''))
    .join('\n');
}

/**
 * The ```ts blocks of a comment's `## Example` (or `## Examples`) sections, each with its line in
 * the comment (1-based). A section ends at the next heading of its level or above, or at the first
 * block tag (`@param`, `@returns`, ...), where TypeDoc ends the comment's summary.
 * `sections` counts the `## Example` headings, so that one without a ```ts block is noticed.
 */
export function exampleBlocks(comment: string): { readonly blocks: CodeBlock[]; readonly sections: number } {
  const lines = comment.split('\n');
  const blocks: CodeBlock[] = [];
  let sections = 0;
  for (let start = 0; start < lines.length; start++) {
    if (!/^##\s+Examples?\s*$/.test(lines[start] ?? '')) continue;
    sections++;
    let end = start + 1;
    let inFence = false;
    for (; end < lines.length; end++) {
      const line = lines[end] ?? '';
      if (/^```/.test(line)) inFence = !inFence;
      if (!inFence && (/^#{1,2}\s/.test(line) || /^@\w/.test(line))) break;
    }
    const section = lines.slice(start + 1, end).join('\n');
    for (const block of typeScriptBlocks(section)) blocks.push({ code: block.code, line: start + 1 + block.line });
  }
  return { blocks, sections };
}

/** Every example of every public export, and the exports whose `## Example` shows no ```ts block. */
export function publicExamples(): { readonly examples: JsDocExample[]; readonly withoutCode: string[] } {
  const sources = ALL_ENTRY_POINTS.map((entry) => path.join(REPO, entry.source));
  const program = ts.createProgram({ rootNames: sources, options: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, strict: true, skipLibCheck: true, noEmit: true, types: ['node'] } });
  const checker = program.getTypeChecker();
  const examples: JsDocExample[] = [];
  const withoutCode: string[] = [];
  const seen = new Set<string>();
  for (const entry of ALL_ENTRY_POINTS) {
    const source = program.getSourceFile(path.join(REPO, entry.source));
    const module = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`${entry.source}: not a module of the program`);
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const declarations = symbol.declarations ?? [];
      const documented: { readonly name: string; readonly node: ts.Node }[] = declarations.map((node) => ({ name: exported.name, node }));
      for (const declaration of declarations) {
        if (!ts.isClassDeclaration(declaration) && !ts.isInterfaceDeclaration(declaration)) continue;
        for (const member of declaration.members) {
          const memberName = member.name === undefined ? undefined : member.name.getText();
          if (memberName !== undefined) documented.push({ name: `${exported.name}.${memberName}`, node: member });
        }
      }
      const ordinals = new Map<string, number>();
      for (const { name, node } of documented) {
        const file = node.getSourceFile();
        for (const doc of ts.getJSDocCommentsAndTags(node)) {
          if (!ts.isJSDoc(doc)) continue;
          const key = `${file.fileName}:${doc.pos}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const { blocks, sections } = exampleBlocks(commentText(file.text.slice(doc.pos, doc.end)));
          const firstLine = file.getLineAndCharacterOfPosition(doc.pos).line;
          const relative = path.relative(REPO, file.fileName).split(path.sep).join('/');
          if (sections > 0 && blocks.length === 0) withoutCode.push(`${specifierOf(entry)} ${name} (${relative}:${firstLine + 1})`);
          for (const block of blocks) {
            const ordinal = ordinals.get(name) ?? 0;
            ordinals.set(name, ordinal + 1);
            examples.push({ specifier: specifierOf(entry), name, file: relative, line: firstLine + block.line, ordinal, code: block.code });
          }
        }
      }
    }
  }
  return { examples, withoutCode };
}
