// The build of rx-informer-apiserver (`npm run build -w rx-informer-apiserver`, also run by its
// `npm pack` through `prepack`): as rx-informer's own build (../tsdown.config.mjs), a native ES
// module build and a CommonJS build of src/, file for file, each with its own declarations.
// rx-informer, rxjs and @kubernetes/client-node are peer dependencies: tsdown leaves every import
// of them (rx-informer/pipeline, ... included) as an import of the user's copy, so the server's
// errors are the user's rx-informer's classes (an informer tells them apart with instanceof).
import { createRequire } from 'node:module';
import { restoreClientNodeTypeImports } from '../tsdown.config.mjs';

const { PACKAGES } = createRequire(import.meta.url)('../scripts/entryPoints.js');
const self = PACKAGES.find((pkg) => pkg.name === 'rx-informer-apiserver');
/** The entry files, relative to this folder (src/index.ts). */
const entries = self.entryPoints.map((entry) => entry.source.slice(self.folder.length + 1));

const OUT_DIR = 'dist';

const server = {
  platform: 'node',
  target: 'node20',
  unbundle: true,
  dts: true,
  sourcemap: false,
  tsconfig: 'tsconfig.build.json',
  outDir: OUT_DIR,
  hooks: { 'build:done': () => restoreClientNodeTypeImports(OUT_DIR) },
};

/** @type {import('tsdown').UserConfig[]} */
export default [
  {
    ...server,
    format: 'esm',
    entry: entries,
    // ES modules have no __filename. kubeConfig.ts only hands it to createRequire (to resolve the
    // user's @kubernetes/client-node from the server's own location), which takes a file URL as
    // well: import.meta.url, which Jest's ES module mode gives too (not import.meta.filename).
    define: { __filename: 'import.meta.url' },
  },
  {
    ...server,
    format: 'cjs',
    // The rx-informer-apiserver bin is CommonJS only: a command has no importers.
    entry: [...entries, 'src/cli.ts'],
    clean: false,
  },
];
