#!/usr/bin/env node
// The public surface, reviewed: an API report per entry point of each package (api-report/*.api.md:
// rx-informer's from the declarations of lib/, rx-informer-apiserver's from apiserver/src), written
// by @microsoft/api-extractor and checked into the repository.
//
//   node scripts/apiReport.js           checks: fails when a report differs from the surface (npm test runs this)
//   node scripts/apiReport.js --update  rewrites the reports (commit them with the change that moved the surface)
//
// So every change of what users can import shows in review as a change of a report.
'use strict';

const { execFileSync } = require('node:child_process');
const { mkdtempSync, rmSync, readFileSync, existsSync, writeFileSync, cpSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { Extractor, ExtractorConfig, ExtractorLogLevel } = require('@microsoft/api-extractor');
const { ENTRY_POINTS, ALL_ENTRY_POINTS, PACKAGES, packageOf, specifierOf } = require('./entryPoints');

const REPO = path.resolve(__dirname, '..');
const REPORT_FOLDER = path.join(REPO, 'api-report');
const update = process.argv.includes('--update');

/** `rx-informer` → `rx-informer.api.md`, `rx-informer/leader-election` → `rx-informer-leader-election.api.md`. */
function reportNameOf(entry) {
  return `${specifierOf(entry).replace('/', '-')}.api.md`;
}

/**
 * Each package's declarations, emitted by its tsconfig.build.json into `scratch/dts-<name>`:
 * rx-informer's rooted at lib/, the server's at the repository (its program reaches lib/ through the
 * `rx-informer` paths), so its files sit under apiserver/src there. rx-informer's are also copied,
 * with a package.json, to `scratch/node_modules/rx-informer`, so that the server's declarations
 * import rx-informer as an installed package, as a user's do: the server's report then names
 * rx-informer's types as imports, not copies.
 */
function emitDeclarations(scratch) {
  const tsc = require.resolve('typescript/bin/tsc');
  const folders = new Map();
  for (const pkg of PACKAGES) {
    const outDir = path.join(scratch, `dts-${pkg.name}`);
    execFileSync(process.execPath, [tsc, '-p', path.join(REPO, pkg.folder, 'tsconfig.build.json'), '--declaration', '--emitDeclarationOnly', '--declarationMap', 'false', '--outDir', outDir], {
      cwd: REPO,
      stdio: 'inherit',
    });
    folders.set(pkg.name, outDir);
  }
  const installed = path.join(scratch, 'node_modules', 'rx-informer');
  cpSync(folders.get('rx-informer'), installed, { recursive: true });
  const relative = (entry) => path.relative(folders.get('rx-informer'), declarationOf(entry, folders));
  const typesVersions = Object.fromEntries(ENTRY_POINTS.filter((entry) => entry.subpath !== '.').map((entry) => [entry.subpath.slice(2), [relative(entry)]]));
  writeFileSync(path.join(installed, 'package.json'), JSON.stringify({ name: 'rx-informer', types: relative(ENTRY_POINTS[0]), typesVersions: { '*': typesVersions } }));
  return folders;
}

/** The emitted declaration file of an entry point. */
function declarationOf(entry, folders) {
  const pkg = packageOf(entry);
  const underRoot = pkg.folder === '.' ? entry.source.slice(`${pkg.sourceRoot}/`.length) : entry.source;
  return path.join(folders.get(pkg.name), `${underRoot.slice(0, -'.ts'.length)}.d.ts`);
}

function report(entry, folders, scratch) {
  const entryDeclarations = declarationOf(entry, folders);
  const config = ExtractorConfig.prepare({
    configObjectFullPath: path.join(REPO, 'api-extractor.json'),
    packageJsonFullPath: path.join(REPO, packageOf(entry).folder, 'package.json'),
    configObject: {
      projectFolder: REPO,
      mainEntryPointFilePath: entryDeclarations,
      bundledPackages: [],
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: 'ES2022',
            module: 'commonjs',
            moduleResolution: 'node',
            strict: true,
            skipLibCheck: true,
            types: ['node'],
            lib: ['ES2022'],
          },
          files: [entryDeclarations],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: reportNameOf(entry),
        reportFolder: REPORT_FOLDER,
        reportTempFolder: scratch,
        includeForgottenExports: false,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
          // TypeDoc checks that every public export is documented (npm run docs).
          'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // Checked across entry points below: a subpath's signatures may use the root's types.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-internal-missing-underscore': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-unresolved-link': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
        // The JSDoc is written for TypeDoc (Markdown headings, `{@link}`), not for TSDoc's stricter syntax.
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false } },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error, addToApiReportFile: false } },
      },
    },
  });
  const forgotten = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (message) => {
      if (message.messageId === 'ae-forgotten-export') forgotten.push(/"([^"]+)"/.exec(message.text)?.[1] ?? message.text);
      quietInfo(message);
    },
  });
  return { entry, result, forgotten };
}

/** Every name some entry point exports, read from the emitted declarations. */
function exportedNames(folders) {
  const ts = require('typescript');
  const files = ALL_ENTRY_POINTS.map((entry) => declarationOf(entry, folders));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    strict: true,
    skipLibCheck: true,
    types: ['node'],
  });
  const checker = program.getTypeChecker();
  const names = new Set();
  for (const file of files) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file));
    for (const symbol of checker.getExportsOfModule(module)) names.add(symbol.name);
  }
  return names;
}

/** api-extractor's progress lines are noise in `npm test`; warnings and errors still print. */
function quietInfo(message) {
  if (message.logLevel === ExtractorLogLevel.Info || message.logLevel === ExtractorLogLevel.Verbose) message.handled = true;
}

function main() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'rx-informer-api-'));
  try {
    const folders = emitDeclarations(scratch);
    const outcomes = ALL_ENTRY_POINTS.map((entry) => report(entry, folders, scratch));
    // A type that a public signature uses must itself be importable from some entry point.
    const exported = exportedNames(folders);
    const unexported = outcomes.flatMap(({ entry, forgotten }) => forgotten.filter((name) => !exported.has(name)).map((name) => `${specifierOf(entry)}: ${name}`));
    for (const line of unexported) console.error(`used in a public signature but exported by no entry point: ${line}`);
    const failed = outcomes.filter(({ result }) => !result.succeeded || (!update && result.apiReportChanged));
    if (unexported.length > 0) failed.push(...unexported);
    for (const { entry, result } of outcomes) {
      const name = reportNameOf(entry);
      if (update) console.log(`api-report/${name}: ${result.apiReportChanged ? 'updated' : 'unchanged'}`);
      else if (result.apiReportChanged) {
        const fresh = path.join(scratch, name);
        console.error(`\n${specifierOf(entry)}: the public surface differs from api-report/${name}.`);
        if (existsSync(fresh)) printDifference(path.join(REPORT_FOLDER, name), fresh);
      }
    }
    if (failed.length > 0) {
      console.error(
        update
          ? 'api-extractor failed (see above).'
          : '\nThe public surface changed. If that is intended, run `npm run api:update` and commit api-report/ with the change; it is what review reads.',
      );
      process.exitCode = 1;
    } else if (!update) console.log(`api-report: ${outcomes.length} entry points match their reports`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A line diff of the committed report and the fresh one, for the failure message. */
function printDifference(committedPath, freshPath) {
  const committed = existsSync(committedPath) ? readFileSync(committedPath, 'utf8').split('\n') : [];
  const fresh = readFileSync(freshPath, 'utf8').split('\n');
  const before = new Set(committed);
  const after = new Set(fresh);
  for (const line of committed) if (!after.has(line)) console.error(`  - ${line}`);
  for (const line of fresh) if (!before.has(line)) console.error(`  + ${line}`);
}

main();
