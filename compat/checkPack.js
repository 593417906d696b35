'use strict';
/*
 * Checks the shape of the tarball `npm pack --json` described, for compat/run.sh:
 *   node checkPack.js REPO PACK_JSON PACK_DIR
 * Prints the tarball's path on stdout when the shape is right; otherwise names every problem on
 * stderr and exits 1.
 */
const fs = require('node:fs');
const path = require('node:path');

const [repo, packJson, packDir] = process.argv.slice(2);
const [pack] = JSON.parse(fs.readFileSync(packJson, 'utf8'));
const files = new Set(pack.files.map((file) => file.path));
const manifest = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const problems = [];
const notes = [];

/** Every file a manifest field points at, as a path inside the package. */
function targets(value) {
  if (typeof value === 'string') return [path.posix.normalize(value)];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap(targets);
}

// 1. Every entry point the manifest names is in the tarball.
const entryPoints = [
  ['main', manifest.main],
  ['types', manifest.types],
  ['exports', manifest.exports],
  ['bin', manifest.bin],
];
for (const [field, value] of entryPoints) {
  const named = targets(value);
  if (named.length === 0) problems.push(`package.json has no "${field}"`);
  for (const target of named) {
    if (!files.has(target)) problems.push(`package.json "${field}" points at ${target}, which the tarball lacks`);
  }
}
// Both formats for each subpath, each with its own declarations (.d.mts beside .mjs, .d.cts beside .cjs).
const { ENTRY_POINTS, distOf } = require('../scripts/entryPoints');
for (const { subpath } of ENTRY_POINTS) {
  const entry = (manifest.exports && manifest.exports[subpath]) || {};
  for (const [condition, js, dts] of [['import', '.mjs', '.d.mts'], ['require', '.cjs', '.d.cts']]) {
    const target = entry[condition];
    if (!target || typeof target.types !== 'string' || typeof target.default !== 'string') {
      problems.push(`exports["${subpath}"].${condition} needs "types" and "default"`);
    } else if (!target.default.endsWith(js) || !target.types.endsWith(dts)) {
      problems.push(`exports["${subpath}"].${condition} should point at ${js} and ${dts} files, not ${target.default} and ${target.types}`);
    }
  }
}

// 2. The bin runs as a command.
for (const bin of targets(manifest.bin)) {
  const file = path.join(repo, bin);
  if (fs.existsSync(file) && !fs.readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node')) {
    problems.push(`the bin ${bin} does not start with "#!/usr/bin/env node"`);
  }
}

// 3. Nothing but the build, the docs and the manifest; no tests, no sources.
const allowed = /^(dist\/|docs\/|examples\/|package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$)/;
for (const file of files) {
  if (!allowed.test(file)) problems.push(`unexpected file in the tarball: ${file}`);
  else if (/\.(spec|test)\.(js|d\.ts)$/.test(file)) problems.push(`a test file in the tarball: ${file}`);
}

// 4. No stale build output: each dist/ file comes from a lib/ source that still exists (the
// bundler's own helpers live in dist/_virtual/).
for (const file of files) {
  const match = /^dist\/(.+?)(\.d\.[cm]ts|\.[cm]js|\.[cm]js\.map)$/.exec(file);
  if (match && !match[1].startsWith('_virtual/') && !fs.existsSync(path.join(repo, 'lib', `${match[1]}.ts`))) {
    problems.push(`stale build output ${file}: lib/${match[1]}.ts no longer exists (rm -rf dist, then rebuild)`);
  }
}
// Both builds are there: every public module in both formats, with declarations.
for (const entry of ENTRY_POINTS) {
  for (const ext of ['.mjs', '.d.mts', '.cjs', '.d.cts']) {
    const file = distOf(entry, ext).slice(2);
    if (!files.has(file)) problems.push(`the tarball lacks ${file}`);
  }
}

// 5. What the consumer brings is a peer, not a dependency (one copy of rxjs, the user's client-node).
for (const peer of ['@kubernetes/client-node', 'rxjs']) {
  if (!manifest.peerDependencies || !manifest.peerDependencies[peer]) problems.push(`${peer} is not a peerDependency`);
  if (manifest.dependencies && manifest.dependencies[peer]) problems.push(`${peer} is a dependency; it must be a peer only`);
}
// prom-client is for rx-informer/prometheus only: an optional peer, never installed for everyone.
if (!manifest.peerDependencies || !manifest.peerDependencies['prom-client']) problems.push('prom-client is not a peerDependency');
if (!manifest.peerDependenciesMeta || !manifest.peerDependenciesMeta['prom-client'] || manifest.peerDependenciesMeta['prom-client'].optional !== true) {
  problems.push('prom-client is not an optional peer (peerDependenciesMeta)');
}
if (manifest.dependencies && manifest.dependencies['prom-client']) problems.push('prom-client is a dependency; it must be an optional peer only');
if (!files.has('README.md')) problems.push('the tarball has no README.md');
if (!files.has('LICENSE')) problems.push(`the tarball has no LICENSE file (license: ${manifest.license})`);

const tarball = path.join(packDir, pack.filename);
if (!fs.existsSync(tarball)) problems.push(`npm pack reported ${pack.filename}, which is not in ${packDir}`);

console.error(`   ${pack.filename}: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(0)} kB packed, ${(pack.unpackedSize / 1024).toFixed(0)} kB unpacked`);
for (const note of notes) console.error(`   note: ${note}`);
for (const problem of problems) console.error(`   problem: ${problem}`);
if (problems.length > 0) process.exit(1);
console.log(tarball);
