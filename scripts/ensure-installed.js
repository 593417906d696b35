'use strict';
/*
 * `npm start` and `npm test` run this first (prestart, pretest): on a fresh clone, or when the
 * installed tree no longer matches package-lock.json, it runs `npm ci` and says so in one line, so
 * the README's two commands are all the set-up there is. On an installed tree it reads two JSON
 * files and exits (a few tens of milliseconds; DEVELOPERS.md has the measurement).
 *
 * "Matches" means: npm's record of what it installed (node_modules/.package-lock.json, written by
 * every npm install and npm ci) has every package of the lock file at the locked version. An
 * optional package may be absent: npm skips those built for other platforms.
 */
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** Why the installed tree does not match the lock file, or undefined when it does. */
function mismatch() {
  const installedFile = path.join(root, 'node_modules', '.package-lock.json');
  if (!fs.existsSync(installedFile)) return 'no node_modules';
  const locked = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')).packages ?? {};
  const installed = JSON.parse(fs.readFileSync(installedFile, 'utf8')).packages ?? {};
  for (const [where, entry] of Object.entries(locked)) {
    if (where === '') continue;
    const found = installed[where];
    if (found === undefined) {
      if (entry.optional) continue;
      return `${where.replace(/^node_modules\//, '')} is not installed`;
    }
    if (found.version !== entry.version) return `${where.replace(/^node_modules\//, '')} is ${found.version}, the lock file says ${entry.version}`;
  }
  return undefined;
}

const reason = mismatch();
if (reason !== undefined) {
  // On Node 20, npm ci warns EBADENGINE for undici (client-node 2.x's, a devDependency): the
  // scripts run under the Node 22 it installs, so the line says so before npm does.
  console.log(`rx-informer: installing the locked dependencies first (${reason}): npm ci; an EBADENGINE warning for undici is harmless (README)`);
  const npm = process.env.npm_execpath;
  // Under npm, npm_execpath is npm's own CLI script: run it with this Node, as npm itself runs.
  const command = npm !== undefined && npm.endsWith('.js') ? process.execPath : 'npm';
  const args = npm !== undefined && npm.endsWith('.js') ? [npm, 'ci', '--no-audit', '--no-fund'] : ['ci', '--no-audit', '--no-fund'];
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`rx-informer: npm ci failed (exit ${result.status ?? result.signal}); run it yourself to see why`);
    process.exit(result.status ?? 1);
  }
}
