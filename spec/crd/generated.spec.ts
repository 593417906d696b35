import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { crdToTypeScript } from '../../lib/crd/crdToTypeScript';

/**
 * The generator's output for real CRDs of well-known projects (spec/crd/fixtures/, each naming
 * where it comes from) is checked in under spec/crd/generated/, where `npm test`'s tsc compiles it
 * under strict. Generating again must give the same text, so that a change of the generator shows
 * as a diff of these files. To regenerate one after a deliberate change:
 *
 *   node -r ts-node/register/transpile-only lib/crd/cli.ts crd spec/crd/fixtures/<name>.yaml --out spec/crd/generated/<name>.ts
 */

const FIXTURES = path.join(__dirname, 'fixtures');
const GENERATED = path.join(__dirname, 'generated');
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => name.slice(0, -'.yaml'.length));

const generate = (name: string): string => crdToTypeScript(parseAllDocuments(readFileSync(path.join(FIXTURES, `${name}.yaml`), 'utf8')).map((document) => document.toJS() as unknown));
const checkedIn = (name: string): string => readFileSync(path.join(GENERATED, `${name}.ts`), 'utf8');

describe('the generated types of the CRD fixtures', () => {
  it('cover the projects the issue names, and one file is checked in per fixture', () => {
    expect(fixtures).toEqual(
      expect.arrayContaining(['argo-cd-applications', 'cert-manager-certificates', 'gateway-api-httproutes', 'prometheus-operator-servicemonitors', 'crossplane-compositions', 'istio-gateways']),
    );
    expect(readdirSync(GENERATED).sort()).toEqual(fixtures.map((name) => `${name}.ts`).sort());
  });

  it.each(fixtures)('%s: generating again gives the checked-in file', (name) => {
    expect(generate(name)).toBe(checkedIn(name));
  });

  it('exercise every construct the generator maps, between them', () => {
    const all = fixtures.map(checkedIn).join('\n');
    const constructs: Record<string, RegExp> = {
      'int-or-string': /: number \| string;/,
      'preserve-unknown-fields beside known fields': /\n  readonly [a-z][A-Za-z]*\??: [^\n]+;\n  readonly \[key: string\]: unknown;\n}/,
      'preserve-unknown-fields alone': /: \{ readonly \[key: string\]: unknown \};/,
      'embedded resource': /readonly apiVersion: string;\n  readonly kind: string;\n  readonly metadata\?: Partial<ObjectMeta>;/,
      'list-map keys': /An item of a list-map keyed by `[^`]+`(, `[^`]+`)* and `[^`]+`/,
      nullable: /: boolean \| null;/,
      enum: /: '[A-Za-z]+' \| '[A-Za-z]+'/,
      'date-time': /Format `date-time`/,
      'several served versions': /export const httproutesV1beta1: Resource<HTTPRouteV1beta1>/,
      'a cluster-scoped resource': /namespaced: false \}\);/,
    };
    const missing = Object.entries(constructs)
      .filter(([, pattern]) => !pattern.test(all))
      .map(([construct]) => construct);
    expect(missing).toEqual([]);
  });

  it('never write the type any (what a schema leaves open is unknown)', () => {
    const keywords = (name: string): Set<ts.SyntaxKind> => {
      const found = new Set<ts.SyntaxKind>();
      const visit = (node: ts.Node): void => {
        found.add(node.kind);
        ts.forEachChild(node, visit);
      };
      visit(ts.createSourceFile(`${name}.ts`, checkedIn(name), ts.ScriptTarget.ES2022));
      return found;
    };
    const all = fixtures.map(keywords);
    expect(fixtures.filter((_, i) => all[i]!.has(ts.SyntaxKind.AnyKeyword))).toEqual([]);
    expect(all.some((kinds) => kinds.has(ts.SyntaxKind.UnknownKeyword))).toBe(true);
  });
});
