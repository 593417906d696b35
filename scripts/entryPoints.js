// The entry points of the repository's packages: each subpath of a package's `exports` map and
// the source file it is built from. rx-informer is the root package (lib/); the loopback API
// server is the workspace package rx-informer-apiserver (apiserver/). The one list that the builds
// (tsdown.config.mjs, apiserver/tsdown.config.mjs), the API reports (scripts/apiReport.js), jest's
// and TypeScript's mapping of the package names onto their sources (jest.config.js,
// tsconfig.json), TypeDoc (typedoc.json), compat and the packages' `exports` agree on;
// spec/structure/entryPoints.spec.ts checks that they do.
'use strict';

/**
 * @typedef {{ package: string, subpath: string, source: string }} EntryPoint
 * @typedef {{ name: string, folder: string, sourceRoot: string, entryPoints: readonly EntryPoint[] }} Package
 */

const entry = (packageName) => (subpath, source) => Object.freeze({ package: packageName, subpath, source });
const root = entry('rx-informer');
const apiserver = entry('rx-informer-apiserver');

/** rx-informer's entry points, the root first. @type {readonly EntryPoint[]} */
const ENTRY_POINTS = Object.freeze([
  root('.', 'lib/index.ts'),
  root('./pipeline', 'lib/pipeline.ts'),
  root('./writes', 'lib/writes/index.ts'),
  root('./workqueue', 'lib/workqueue/index.ts'),
  root('./leader-election', 'lib/leaderElection/index.ts'),
  root('./sharding', 'lib/sharding/index.ts'),
  root('./prometheus', 'lib/prometheus/index.ts'),
  root('./testing', 'lib/testing/index.ts'),
]);

/** Every package of the repository: its name, folder, source folder and entry points. @type {readonly Package[]} */
const PACKAGES = Object.freeze([
  Object.freeze({ name: 'rx-informer', folder: '.', sourceRoot: 'lib', entryPoints: ENTRY_POINTS }),
  Object.freeze({
    name: 'rx-informer-apiserver',
    folder: 'apiserver',
    sourceRoot: 'apiserver/src',
    entryPoints: Object.freeze([apiserver('.', 'apiserver/src/index.ts')]),
  }),
]);

/** Every entry point of every package, rx-informer's first. @type {readonly EntryPoint[]} */
const ALL_ENTRY_POINTS = Object.freeze(PACKAGES.flatMap((pkg) => pkg.entryPoints));

function packageOf(entry) {
  const found = PACKAGES.find((pkg) => pkg.name === entry.package);
  if (found === undefined) throw new Error(`no package ${entry.package}`);
  return found;
}

/** `rx-informer`, `rx-informer/pipeline`, ..., `rx-informer-apiserver`. */
function specifierOf(entry) {
  return entry.subpath === '.' ? entry.package : `${entry.package}/${entry.subpath.slice(2)}`;
}

/**
 * The built file of an entry, relative to its package's folder: `dist/<path under the source
 * folder>` with `ext` (`.mjs`, `.cjs`, `.d.mts`, `.d.cts`).
 */
function distOf(entry, ext) {
  const { sourceRoot } = packageOf(entry);
  return `./dist/${entry.source.slice(sourceRoot.length + 1, -'.ts'.length)}${ext}`;
}

module.exports = { ENTRY_POINTS, PACKAGES, ALL_ENTRY_POINTS, packageOf, specifierOf, distOf };
