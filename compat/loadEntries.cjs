'use strict';
/*
 * Every entry point of every package, loaded as a CommonJS consumer loads it, for compat/run.sh:
 *   node --trace-warnings loadEntries.cjs SPECIFIER...
 * (the specifiers of scripts/entryPoints.js). require()s each; checks that the installed packages'
 * exports maps name exactly these entry points and that none loads empty; then checks the Lease
 * rules through the CommonJS build of rx-informer-apiserver (compat/leaseRules.cjs). Prints one
 * `ok NAME` or `FAIL NAME: why` line per check; any process warning (Node prints them to stderr,
 * with --trace-warnings their stack) is a failure too.
 */
const fs = require('node:fs');
const path = require('node:path');
const { checkLeaseRules } = require('./leaseRules.cjs');

const warnings = [];
process.on('warning', (warning) => warnings.push(warning));
let failed = false;
const report = (name, ok, detail) => {
  if (!ok) failed = true;
  console.log(ok ? `ok ${name}` : `FAIL ${name}: ${detail}`);
};

function exportedSpecifiers(packageName) {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', packageName, 'package.json'), 'utf8'));
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? packageName : `${packageName}/${subpath.slice(2)}`));
}

async function main() {
  const specifiers = process.argv.slice(2);
  const exported = [...exportedSpecifiers('rx-informer'), ...exportedSpecifiers('rx-informer-apiserver')];
  report('the exports maps name every entry point of scripts/entryPoints.js', JSON.stringify([...exported].sort()) === JSON.stringify([...specifiers].sort()), `exported ${exported.join(', ')}; listed ${specifiers.join(', ')}`);
  for (const specifier of specifiers) {
    try {
      const loaded = require(specifier);
      report(`require('${specifier}')`, Object.keys(loaded).length > 0, 'it exports nothing');
    } catch (error) {
      report(`require('${specifier}')`, false, error && error.stack ? error.stack : String(error));
    }
  }
  const { startApiServer } = require('rx-informer-apiserver');
  for (const result of await checkLeaseRules(startApiServer)) report(`CommonJS build: ${result.name}`, result.ok, result.detail);
  report('no process warning', warnings.length === 0, warnings.map((warning) => warning.stack || String(warning)).join('\n'));
  process.exitCode = failed ? 1 : 0;
}

main().catch((error) => {
  console.log(`FAIL loadEntries.cjs: ${error && error.stack ? error.stack : error}`);
  process.exitCode = 1;
});
