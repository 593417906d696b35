// The dependency rule of lib/ (docs/concepts.md, "Map of the code"): the folders are the stages
// of the pipeline, in order, and a stage imports only the stages before it. No import runs from a
// stage to a later one, and no files import each other in a circle (type-only imports included:
// a circle of types is a contract declared in the wrong file). `npm test` runs this
// (`npm run check:imports`); spec/structure/dependencyRule.spec.ts shows that a violation fails.
//
// The same rule holds the loopback API server's package (apiserver/src, rx-informer-apiserver):
// no circles in it, and it reaches rx-informer only by name through rx-informer's public entry
// points (`rx-informer`, `rx-informer/pipeline`, ...), as a user's code does, never a lib/ file by
// path; lib/ never imports it.
const { ENTRY_POINTS } = require('./scripts/entryPoints');

/**
 * The stages, first to last. A folder imports only folders before it in this list (and itself).
 * Each stage's entry file (`index.ts`) only re-exports its own stage; `lib/index.ts` re-exports
 * any stage.
 */
const STAGES = [
  'base', // typed errors, the logger, the object shape, the operator helper: below every stage
  'resources', // what to watch: resource descriptors
  'sources', // HTTP list and watch through a KubeConfig
  'crd', // CustomResourceDefinitions: TypeScript types and descriptors from their schemas (`rx-informer crd`)
  'reflector', // list then watch, as the delta stream
  'store', // the indexed snapshot and the reducer that folds deltas into it
  'handlers', // handle(): per-subscriber queues, passes, resync
  'informer', // wiring: informer(), waitForSync
  'factory', // one informer per resource
  'writes', // writing back: edits as patches, server-side apply, conditions, Events
  'operators', // what users pipe
  'workqueue', // controller layers, each its own entry point
  'leaderElection',
  'sharding',
  'prometheus',
  'testing', // in-process test helpers (the loopback API server is apiserver/, its own package)
];

const laterThan = (index) => STAGES.slice(index + 1);

const stageRules = STAGES.slice(0, -1).map((stage, index) => ({
  name: `stage-order: ${stage} imports no later stage`,
  comment:
    `lib/${stage} is stage ${index + 1} of ${STAGES.join(' -> ')}; it may import only the stages before it. ` +
    'Move the shared piece down to the stage that owns it (or to base), or reverse the dependency.',
  severity: 'error',
  from: { path: `^lib/${stage}/` },
  to: { path: `^lib/(${laterThan(index).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...stageRules,
    {
      name: 'stage-order: a stage never imports the root entry',
      comment: 'lib/index.ts only re-exports; import the file that declares the name instead.',
      severity: 'error',
      from: { path: '^lib/.+/' },
      to: { path: '^lib/index\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'Files that import each other (type-only imports too): move the shared declaration into a file both import.',
      severity: 'error',
      from: { path: '^(lib|apiserver)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing.',
      severity: 'error',
      from: { path: '^(lib|apiserver)/' },
      to: { couldNotResolve: true, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'apiserver: rx-informer by name, never lib/ by path',
      comment:
        'rx-informer-apiserver is a package of its own: it imports rx-informer as its users do, by name ' +
        "(`import { ... } from 'rx-informer'`), never a lib/ file by a relative path.",
      severity: 'error',
      from: { path: '^apiserver/' },
      to: { path: '^lib/', dependencyTypesNot: ['aliased-tsconfig-paths'] },
    },
    {
      name: "apiserver: only rx-informer's public entry points",
      comment:
        "rx-informer-apiserver reaches rx-informer through its public entry points only (scripts/entryPoints.js): a name that is not exported is the server's own copy, or a reason to export it.",
      severity: 'error',
      from: { path: '^apiserver/' },
      to: { path: '^lib/', pathNot: `^(${ENTRY_POINTS.map((entry) => entry.source.replace(/\./g, '\\.')).join('|')})$` },
    },
    {
      name: 'lib/ never imports the apiserver package',
      comment: 'rx-informer does not depend on its test server; the server depends on rx-informer.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^apiserver/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(lib|apiserver)/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
