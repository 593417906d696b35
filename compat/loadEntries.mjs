/*
 * Every entry point of every package, loaded as an ES module consumer loads it, for compat/run.sh:
 *   node --trace-warnings loadEntries.mjs SPECIFIER...
 * run from a folder whose package.json says `"type": "module"`. import()s each (the exports map's
 * `import` condition: the .mjs build, and nothing of the CommonJS build); checks that none loads
 * empty (compat/smoke.js compares the two builds' names); then checks the Lease rules through the ES module build of
 * rx-informer-apiserver (compat/leaseRules.cjs, handed the imported startApiServer). Prints one
 * `ok NAME` or `FAIL NAME: why` line per check; any process warning is a failure too.
 */
import { checkLeaseRules } from '../leaseRules.cjs';

const warnings = [];
process.on('warning', (warning) => warnings.push(warning));
let failed = false;
const report = (name, ok, detail) => {
  if (!ok) failed = true;
  console.log(ok ? `ok ${name}` : `FAIL ${name}: ${detail}`);
};

for (const specifier of process.argv.slice(2)) {
  try {
    const imported = await import(specifier);
    const names = Object.keys(imported).filter((name) => name !== 'default');
    report(`import('${specifier}')`, names.length > 0, 'it exports nothing');
  } catch (error) {
    report(`import('${specifier}')`, false, error && error.stack ? error.stack : String(error));
  }
}
const { startApiServer } = await import('rx-informer-apiserver');
for (const result of await checkLeaseRules(startApiServer)) report(`ES module build: ${result.name}`, result.ok, result.detail);
report('no process warning', warnings.length === 0, warnings.map((warning) => warning.stack || String(warning)).join('\n'));
process.exitCode = failed ? 1 : 0;
