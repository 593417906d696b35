// The package's entry points: each subpath of the `exports` map and the lib/ file it is built
// from. The one list that the build (tsdown.config.mjs), the API report (scripts/apiReport.js),
// jest's and TypeScript's mapping of the package name onto lib/ (jest.config.js, tsconfig.json),
// TypeDoc (typedoc.json), compat and package.json's `exports` agree on;
// spec/structure/entryPoints.spec.ts checks that they do.
'use strict';

/** @type {readonly { subpath: string, source: string }[]} */
const ENTRY_POINTS = Object.freeze([
  { subpath: '.', source: 'lib/index.ts' },
  { subpath: './pipeline', source: 'lib/pipeline.ts' },
  { subpath: './workqueue', source: 'lib/workqueue/index.ts' },
  { subpath: './leader-election', source: 'lib/leaderElection/index.ts' },
  { subpath: './sharding', source: 'lib/sharding/index.ts' },
  { subpath: './prometheus', source: 'lib/prometheus/index.ts' },
  { subpath: './testing', source: 'lib/testing/index.ts' },
]);

/** `rx-informer`, `rx-informer/pipeline`, ... */
function specifierOf(entry) {
  return entry.subpath === '.' ? 'rx-informer' : `rx-informer/${entry.subpath.slice(2)}`;
}

/** The built file of an entry: `dist/<path under lib>` with `ext` (`.mjs`, `.cjs`, `.d.mts`, `.d.cts`). */
function distOf(entry, ext) {
  return `./dist/${entry.source.slice('lib/'.length, -'.ts'.length)}${ext}`;
}

module.exports = { ENTRY_POINTS, specifierOf, distOf };
