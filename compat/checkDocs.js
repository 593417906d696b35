'use strict';
/*
 * Checks the Markdown the package ships, for compat/run.sh:
 *   node checkDocs.js UNPACKED_PACKAGE_DIR REPO
 * - every relative link in a shipped .md file leads to a file the package ships (a link into
 *   spec/, DEVELOPERS.md or anything else left out of the tarball is a dead link for its readers);
 * - the shipped README does not open with the repository's own commands (npm start / npm test);
 * - its quickstart is the repository README's quickstart, word for word (that one is run by
 *   spec/docs/readme.spec.ts; compat/run.sh runs this one from the package).
 * Names every problem on stderr and exits 1 when there is one.
 */
const fs = require('node:fs');
const path = require('node:path');
const { relativeLinks, quickstartBlock } = require('./docRules');

const [packageDir, repo] = process.argv.slice(2);
const problems = [];

function shippedFiles(dir, prefix = '') {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory() ? shippedFiles(path.join(dir, entry.name), relative) : [relative];
  });
}

const shipped = new Set(shippedFiles(packageDir));
const markdown = [...shipped].filter((file) => file.endsWith('.md'));
let links = 0;
for (const file of markdown) {
  for (const { target, resolved } of relativeLinks(file, fs.readFileSync(path.join(packageDir, file), 'utf8'))) {
    links++;
    const isFolder = [...shipped].some((shippedFile) => shippedFile.startsWith(`${resolved.replace(/\/$/, '')}/`));
    if (!shipped.has(resolved) && !isFolder) problems.push(`${file}: the link ${target} leads to ${resolved}, which the package does not ship`);
  }
}

const readme = fs.readFileSync(path.join(packageDir, 'README.md'), 'utf8');
const firstCommands = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
if (/^\s*npm (start|test)\b/m.test(firstCommands)) problems.push("the shipped README's first commands are the repository's own (npm start / npm test)");

function quickstart(text, name) {
  const block = quickstartBlock(text);
  if (block === undefined) problems.push(`${name} has no <!-- quickstart --> block`);
  return block;
}
const shippedQuickstart = quickstart(readme, 'the shipped README');
const repositoryQuickstart = quickstart(fs.readFileSync(path.join(repo, 'README.md'), 'utf8'), "the repository's README.md");
if (shippedQuickstart !== repositoryQuickstart) problems.push("the shipped README's quickstart differs from the repository README's");

// The TypeScript setups (compat/run.sh checks the shipped README's) read the same in both READMEs.
const setups = (text) => [...text.matchAll(/<!-- tsconfig: (\S+) -->\n```json\n([\s\S]*?)```/g)].map((m) => `${m[1]}: ${m[2].trim()}`);
const shippedSetups = setups(readme);
if (shippedSetups.length === 0) problems.push('the shipped README documents no <!-- tsconfig: ... --> setup');
if (JSON.stringify(shippedSetups) !== JSON.stringify(setups(fs.readFileSync(path.join(repo, 'README.md'), 'utf8')))) {
  problems.push("the shipped README's TypeScript setups differ from the repository README's");
}

console.error(`   ${markdown.length} Markdown files shipped, ${links} relative links checked`);
for (const problem of problems) console.error(`   problem: ${problem}`);
process.exit(problems.length > 0 ? 1 : 0);
