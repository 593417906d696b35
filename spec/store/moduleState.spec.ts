import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/** Top-level `let`/`var` bindings, non-readonly static fields and static blocks of a module: state every importer shares. */
function moduleLevelMutableState(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement) && (statement.declarationList.flags & ts.NodeFlags.Const) === 0) {
      for (const declaration of statement.declarationList.declarations) found.push(declaration.name.getText(source));
    }
    if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        const isStatic = modifiers.some((m) => m.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = modifiers.some((m) => m.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(member) && isStatic && !isReadonly) found.push(`${statement.name?.text}.${member.name.getText(source)}`);
        if (ts.isClassStaticBlockDeclaration(member)) found.push(`${statement.name?.text} static block`);
      }
    }
  }
  return found.map((name) => `${path.basename(file)}: ${name}`);
}

describe('the store', () => {
  it('holds no state at module level (no top-level let or var, no writable static), so two informers, or two copies of the library, never share any', () => {
    const folder = path.join(__dirname, '../../lib/store');
    const files = readdirSync(folder).filter((name) => name.endsWith('.ts'));
    expect(files).toContain('hamt.ts');
    expect(files.flatMap((name) => moduleLevelMutableState(path.join(folder, name)))).toEqual([]);
  });
});
