'use strict';
/*
 * The package's README is package-readme.md (for users: install, TypeScript setup, quickstart);
 * the repository's README.md opens with the contributor's two commands. npm always packs the root
 * README.md, so `npm pack` / `npm publish` swap them around the packing:
 *   node scripts/pack-readme.js in    (prepack: README.md is put aside, package-readme.md takes its place)
 *   node scripts/pack-readme.js out   (postpack: README.md comes back)
 * A pack that failed half way leaves the repository README aside; the next `in` or `out` puts it
 * back first, so nothing is lost.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const readme = path.join(root, 'README.md');
const aside = path.join(root, 'node_modules', '.cache', 'rx-informer-pack', 'README.md');

function putBack() {
  if (!fs.existsSync(aside)) return;
  fs.copyFileSync(aside, readme);
  fs.rmSync(aside);
}

const step = process.argv[2];
if (step === 'in') {
  putBack();
  fs.mkdirSync(path.dirname(aside), { recursive: true });
  fs.copyFileSync(readme, aside);
  fs.copyFileSync(path.join(root, 'package-readme.md'), readme);
} else if (step === 'out') {
  putBack();
} else {
  console.error('usage: node scripts/pack-readme.js in|out');
  process.exit(2);
}
