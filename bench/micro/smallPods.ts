/**
 * Preload that makes the test pods small: `makePod` (apiserver/src/pods.ts) returns pods without
 * `metadata.managedFields`, ~1.3 KB of JSON instead of ~4.4 KB, the size where the per-event cost
 * that is not parsing weighs most. Load it after ts-node:
 *
 *   node -r ts-node/register/transpile-only -r ./bench/micro/smallPods.ts bench/micro/pipeline.ts b 1000 100000
 */
import * as pods from '../../apiserver/src/pods';

const makePod = pods.makePod;
const small: typeof makePod = (...args) => {
  const pod = makePod(...args);
  const { managedFields: _dropped, ...metadata } = pod.metadata;
  return { ...pod, metadata };
};
Object.assign(pods, { makePod: small });
process.stderr.write(`pods without managedFields: ${JSON.stringify(small(() => 0.5, 'ns', 'pod')).length} bytes (bench/micro/smallPods.ts)\n`);
