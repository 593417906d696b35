import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRY_POINTS, distOf, specifierOf } from '../../scripts/entryPoints';

/**
 * scripts/entryPoints.js is the one list of the package's entry points; everything that names them
 * must agree with it, or a subpath would build but not resolve, resolve but not build, or ship
 * without a reviewed API report.
 */
const REPO = join(__dirname, '..', '..');
const json = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(REPO, file), 'utf8')) as Record<string, unknown>;

describe('the entry points', () => {
  const packageJson = json('package.json') as { exports: Record<string, unknown>; typesVersions: { '*': Record<string, string[]> } };

  it('are the exports map of package.json, both formats each with its own declarations', () => {
    const expected: Record<string, unknown> = {};
    for (const entry of ENTRY_POINTS) {
      expected[entry.subpath] = {
        import: { types: distOf(entry, '.d.mts'), default: distOf(entry, '.mjs') },
        require: { types: distOf(entry, '.d.cts'), default: distOf(entry, '.cjs') },
      };
    }
    expected['./package.json'] = './package.json';
    expect(packageJson.exports).toEqual(expected);
  });

  it('resolve under the classic node10 resolution through typesVersions', () => {
    const expected = Object.fromEntries(ENTRY_POINTS.filter((entry) => entry.subpath !== '.').map((entry) => [entry.subpath.slice(2), [distOf(entry, '.d.cts')]]));
    expect(packageJson.typesVersions['*']).toEqual(expected);
  });

  it('are what TypeDoc documents', () => {
    expect((json('typedoc.json') as { entryPoints: string[] }).entryPoints).toEqual(ENTRY_POINTS.map((entry) => entry.source));
  });

  it("map the package's own name onto lib/ for TypeScript, as jest's moduleNameMapper does", () => {
    const paths = (json('tsconfig.json') as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths;
    expect(paths).toEqual(Object.fromEntries(ENTRY_POINTS.map((entry) => [specifierOf(entry), [`./${entry.source}`]])));
  });

  it('each have a checked API report', () => {
    for (const entry of ENTRY_POINTS) {
      const report = readFileSync(join(REPO, 'api-report', `${specifierOf(entry).replace('/', '-')}.api.md`), 'utf8');
      expect(report).toContain(`## API Report File for "rx-informer"`);
    }
  });
});
