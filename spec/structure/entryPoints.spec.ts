import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALL_ENTRY_POINTS, ENTRY_POINTS, PACKAGES, distOf, specifierOf } from '../../scripts/entryPoints';

/**
 * scripts/entryPoints.js is the one list of the packages' entry points; everything that names them
 * must agree with it, or a subpath would build but not resolve, resolve but not build, or ship
 * without a reviewed API report.
 */
const REPO = join(__dirname, '..', '..');
const json = (file: string): Record<string, unknown> => JSON.parse(readFileSync(join(REPO, file), 'utf8')) as Record<string, unknown>;

describe('the entry points', () => {
  const packageJson = json('package.json') as { exports: Record<string, unknown>; typesVersions: { '*': Record<string, string[]> }; workspaces: string[] };

  it.each(PACKAGES.map((pkg) => [pkg.name, pkg] as const))("are %s's exports map, both formats each with its own declarations", (name, pkg) => {
    const manifest = json(join(pkg.folder, 'package.json')) as { name: string; exports: Record<string, unknown> };
    expect(manifest.name).toBe(name);
    const expected: Record<string, unknown> = {};
    for (const entry of pkg.entryPoints) {
      expected[entry.subpath] = {
        import: { types: distOf(entry, '.d.mts'), default: distOf(entry, '.mjs') },
        require: { types: distOf(entry, '.d.cts'), default: distOf(entry, '.cjs') },
      };
    }
    expected['./package.json'] = './package.json';
    expect(manifest.exports).toEqual(expected);
  });

  it("are the root's packages and workspaces", () => {
    expect(PACKAGES[0]?.folder).toBe('.');
    expect(packageJson.workspaces).toEqual(PACKAGES.slice(1).map((pkg) => pkg.folder));
  });

  it('resolve under the classic node10 resolution through typesVersions', () => {
    const expected = Object.fromEntries(ENTRY_POINTS.filter((entry) => entry.subpath !== '.').map((entry) => [entry.subpath.slice(2), [distOf(entry, '.d.cts')]]));
    expect(packageJson.typesVersions['*']).toEqual(expected);
  });

  it('are what TypeDoc documents', () => {
    expect((json('typedoc.json') as { entryPoints: string[] }).entryPoints).toEqual(ALL_ENTRY_POINTS.map((entry) => entry.source));
  });

  it("map the packages' own names onto their sources for TypeScript, as jest's moduleNameMapper does", () => {
    const paths = (json('tsconfig.json') as { compilerOptions: { paths: Record<string, string[]> } }).compilerOptions.paths;
    const mapped = Object.fromEntries(ALL_ENTRY_POINTS.map((entry) => [specifierOf(entry), [`./${entry.source}`]]));
    expect(paths).toEqual(mapped);
    const jestConfig = require('../../jest.config.js') as { moduleNameMapper: Record<string, string> };
    // Besides the packages' own names, client-node 2.x (an ES module) goes through Node's own require.
    expect(jestConfig.moduleNameMapper).toEqual({
      ...Object.fromEntries(ALL_ENTRY_POINTS.map((entry) => [`^${specifierOf(entry)}$`, `<rootDir>/${entry.source}`])),
      '^@kubernetes/client-node$': '<rootDir>/spec/support/clientNodeInJest.js',
    });
  });

  it('each have a checked API report', () => {
    for (const entry of ALL_ENTRY_POINTS) {
      const report = readFileSync(join(REPO, 'api-report', `${specifierOf(entry).replace('/', '-')}.api.md`), 'utf8');
      expect(report).toContain(`## API Report File for "${entry.package}"`);
    }
  });
});
