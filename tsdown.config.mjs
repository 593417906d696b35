// The package build (`npm run build`, also run by `npm pack` through `prepack`): a native ES module
// build and a CommonJS build of lib/, each with its own declarations (.mjs + .d.mts, .cjs + .d.cts:
// one set of types per format, so neither kind of consumer is handed the other's). tsdown
// (rolldown) emits them file for file (unbundle) and writes each format's file extensions into the
// relative imports, so lib/ keeps its extensionless imports.
const library = {
  platform: 'node',
  target: 'node20',
  unbundle: true,
  dts: true,
  sourcemap: false,
  tsconfig: 'tsconfig.build.json',
  outDir: 'dist',
};

/** @type {import('tsdown').UserConfig[]} */
export default [
  {
    ...library,
    format: 'esm',
    entry: ['lib/index.ts', 'lib/testing/index.ts'],
    // ES modules have no __filename; Node >= 20.11 gives them import.meta.filename, the same path
    // (lib/testing resolves the user's @kubernetes/client-node from its own location).
    define: { __filename: 'import.meta.filename' },
  },
  {
    ...library,
    format: 'cjs',
    // The rx-informer-apiserver bin is CommonJS only: a command has no importers.
    entry: ['lib/index.ts', 'lib/testing/index.ts', 'lib/testing/cli.ts'],
    clean: false,
  },
];
