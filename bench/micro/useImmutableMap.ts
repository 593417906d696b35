/**
 * Preload that runs the informer on immutable.js: it registers `immutableHamt.ts` as the loaded
 * module `lib/store/hamt`, so every later `require` of it (the snapshot's) gets immutable's `Map`.
 * The product code keeps no switch for it. Load it after ts-node:
 *
 *   node -r ts-node/register/transpile-only -r ./bench/micro/useImmutableMap.ts bench/micro/pipeline.ts b 100000 100000
 */
import { substituteHamt } from './immutableHamtModule';

substituteHamt();
process.stderr.write('lib/store/hamt is immutable.Map (bench/micro/useImmutableMap.ts)\n');
