'use strict';
/*
 * Checks the shape of the tarball `npm pack --json` described, for compat/run.sh:
 *   node checkPack.js REPO PACKAGE_NAME PACK_JSON PACK_DIR
 * (PACKAGE_NAME: rx-informer, or the workspace package rx-informer-apiserver.)
 * Prints the tarball's path on stdout when the shape is right; otherwise names every problem on
 * stderr and exits 1.
 */
const fs = require('node:fs');
const path = require('node:path');
const { PACKAGES, distOf } = require('../scripts/entryPoints');

const [repo, packageName, packJson, packDir] = process.argv.slice(2);
const problemList = [];
const notes = [];
const pkg = PACKAGES.find((candidate) => candidate.name === packageName);
if (pkg === undefined) throw new Error(`no package ${packageName} in scripts/entryPoints.js`);
const packageFolder = path.join(repo, pkg.folder);
const [pack] = JSON.parse(fs.readFileSync(packJson, 'utf8'));
const files = new Set(pack.files.map((file) => file.path));
const manifest = JSON.parse(fs.readFileSync(path.join(packageFolder, 'package.json'), 'utf8'));
if (manifest.name !== packageName) problemList.push(`${pkg.folder}/package.json names ${manifest.name}, not ${packageName}`);


/** Every file a manifest field points at, as a path inside the package. */
function targets(value) {
  if (typeof value === 'string') return [path.posix.normalize(value)];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap(targets);
}

// 1. Every entry point the manifest names is in the tarball.
// Each package has one command: rx-informer's generates types from a CRD, the server's package
// starts the server (which must never ship inside rx-informer).
const entryPoints = [
  ['main', manifest.main],
  ['types', manifest.types],
  ['exports', manifest.exports],
  ['bin', manifest.bin],
];
if (pkg.folder === '.' && targets(manifest.bin).some((bin) => /apiserver|server/i.test(bin))) {
  problemList.push('rx-informer has a server bin: the loopback server command belongs to rx-informer-apiserver');
}
for (const [field, value] of entryPoints) {
  const named = targets(value);
  if (named.length === 0) problemList.push(`package.json has no "${field}"`);
  for (const target of named) {
    if (!files.has(target)) problemList.push(`package.json "${field}" points at ${target}, which the tarball lacks`);
  }
}
// Both formats for each subpath, each with its own declarations (.d.mts beside .mjs, .d.cts beside .cjs).
for (const { subpath } of pkg.entryPoints) {
  const entry = (manifest.exports && manifest.exports[subpath]) || {};
  for (const [condition, js, dts] of [['import', '.mjs', '.d.mts'], ['require', '.cjs', '.d.cts']]) {
    const target = entry[condition];
    if (!target || typeof target.types !== 'string' || typeof target.default !== 'string') {
      problemList.push(`exports["${subpath}"].${condition} needs "types" and "default"`);
    } else if (!target.default.endsWith(js) || !target.types.endsWith(dts)) {
      problemList.push(`exports["${subpath}"].${condition} should point at ${js} and ${dts} files, not ${target.default} and ${target.types}`);
    }
  }
}

// 2. The bin runs as a command.
for (const bin of targets(manifest.bin)) {
  const file = path.join(packageFolder, bin);
  if (fs.existsSync(file) && !fs.readFileSync(file, 'utf8').startsWith('#!/usr/bin/env node')) {
    problemList.push(`the bin ${bin} does not start with "#!/usr/bin/env node"`);
  }
}

// 3. Nothing but the build, the docs and the manifest; no tests, no sources (the server ships no docs/ or examples/: its README is its guide).
const allowed = pkg.folder === '.' ? /^(dist\/|docs\/|examples\/|package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$)/ : /^(dist\/|package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$)/;
for (const file of files) {
  if (!allowed.test(file)) problemList.push(`unexpected file in the tarball: ${file}`);
  else if (/\.(spec|test)\.(js|d\.ts)$/.test(file)) problemList.push(`a test file in the tarball: ${file}`);
}

// 4. No stale build output: each dist/ file comes from a source that still exists (the
// bundler's own helpers live in dist/_virtual/).
for (const file of files) {
  const match = /^dist\/(.+?)(\.d\.[cm]ts|\.[cm]js|\.[cm]js\.map)$/.exec(file);
  if (match && !match[1].startsWith('_virtual/') && !fs.existsSync(path.join(repo, pkg.sourceRoot, `${match[1]}.ts`))) {
    problemList.push(`stale build output ${file}: ${pkg.sourceRoot}/${match[1]}.ts no longer exists (rm -rf dist, then rebuild)`);
  }
}
// Both builds are there: every public module in both formats, with declarations.
for (const entry of pkg.entryPoints) {
  for (const ext of ['.mjs', '.d.mts', '.cjs', '.d.cts']) {
    const file = distOf(entry, ext).slice(2);
    if (!files.has(file)) problemList.push(`the tarball lacks ${file}`);
  }
}

// 5. What the consumer brings is a peer, not a dependency (one copy of rxjs, the user's client-node).
for (const peer of ['@kubernetes/client-node', 'rxjs']) {
  if (!manifest.peerDependencies || !manifest.peerDependencies[peer]) problemList.push(`${peer} is not a peerDependency`);
  if (manifest.dependencies && manifest.dependencies[peer]) problemList.push(`${peer} is a dependency; it must be a peer only`);
}
// The optional peers: prom-client for rx-informer/prometheus only, never installed for everyone;
// for the server, rx-informer itself (the user's copy, whose error classes an informer checks with
// instanceof: see apiserver/README.md for why it is marked optional).
const optionalPeers = pkg.folder === '.' ? ['prom-client'] : ['rx-informer'];
for (const peer of optionalPeers) {
  if (!manifest.peerDependencies || !manifest.peerDependencies[peer]) problemList.push(`${peer} is not a peerDependency`);
  if (!manifest.peerDependenciesMeta || !manifest.peerDependenciesMeta[peer] || manifest.peerDependenciesMeta[peer].optional !== true) {
    problemList.push(`${peer} is not an optional peer (peerDependenciesMeta)`);
  }
  if (manifest.dependencies && manifest.dependencies[peer]) problemList.push(`${peer} is a dependency; it must be an optional peer only`);
}
if (!files.has('README.md')) problemList.push('the tarball has no README.md');
if (!files.has('LICENSE')) problemList.push(`the tarball has no LICENSE file (license: ${manifest.license})`);

const tarball = path.join(packDir, pack.filename);
if (!fs.existsSync(tarball)) problemList.push(`npm pack reported ${pack.filename}, which is not in ${packDir}`);

console.error(`   ${pack.filename}: ${pack.entryCount} files, ${(pack.size / 1024).toFixed(0)} kB packed, ${(pack.unpackedSize / 1024).toFixed(0)} kB unpacked`);
for (const note of notes) console.error(`   note: ${note}`);
for (const problem of problemList) console.error(`   problem: ${problem}`);
if (problemList.length > 0) process.exit(1);
console.log(tarball);
