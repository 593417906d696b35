// The package build of rx-informer (`npm run build`, also run by `npm pack` through `prepack`): a native ES module
// build and a CommonJS build of lib/, each with its own declarations (.mjs + .d.mts, .cjs + .d.cts:
// one set of types per format, so neither kind of consumer is handed the other's). tsdown
// (rolldown) emits them file for file (unbundle) and writes each format's file extensions into the
// relative imports, so lib/ keeps its extensionless imports.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const { ENTRY_POINTS } = createRequire(import.meta.url)('./scripts/entryPoints.js');
const entries = ENTRY_POINTS.map((entry) => entry.source);

const OUT_DIR = 'dist';

/**
 * @kubernetes/client-node is an ES module that the library imports for types only. The
 * declaration bundler turns `import type` into `import` (and drops the attribute of a namespace
 * import); a CommonJS declaration file then fails to type-check under `node16`/`nodenext`
 * (TS1541, TS1454, TS2856). This puts every client-node import of every declaration file back as
 * `import type ... with { "resolution-mode": "import" }`, as lib/ writes it.
 */
export function restoreClientNodeTypeImports(outDir = OUT_DIR) {
  for (const name of readdirSync(outDir, { recursive: true })) {
    if (!/\.d\.[cm]ts$/.test(name)) continue;
    const file = join(outDir, name);
    const code = readFileSync(file, 'utf8');
    const fixed = code.replace(
      /^import (?:type )?(.+?) from "@kubernetes\/client-node"(?: with \{[^}]*\})?;$/gm,
      'import type $1 from "@kubernetes/client-node" with { "resolution-mode": "import" };',
    );
    if (fixed !== code) writeFileSync(file, fixed);
  }
}

const library = {
  platform: 'node',
  target: 'node20',
  unbundle: true,
  dts: true,
  sourcemap: false,
  tsconfig: 'tsconfig.build.json',
  outDir: OUT_DIR,
  hooks: { 'build:done': () => restoreClientNodeTypeImports() },
};

/** @type {import('tsdown').UserConfig[]} */
export default [
  {
    ...library,
    format: 'esm',
    entry: entries,
  },
  {
    ...library,
    format: 'cjs',
    // The rx-informer bin (types from CRDs) is CommonJS only: a command has no importers.
    entry: [...entries, 'lib/crd/cli.ts'],
    clean: false,
  },
];
