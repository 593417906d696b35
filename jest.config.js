const { ALL_ENTRY_POINTS, specifierOf } = require('./scripts/entryPoints');

/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // The real-clients suite (kubectl, the Python client) runs on its own (npm run test:kubectl), so that a missing client is said plainly.
  testPathIgnorePatterns: ['/node_modules/', '/spec/clients/'],
  // The packages' own names resolve to their sources, as tsconfig.json's `paths` say, so that examples
  // and specs import `rx-informer` and `rx-informer-apiserver` as users do.
  // client-node 2.x, an ES module, through Node's own require (spec/support/clientNodeInJest.js).
  moduleNameMapper: {
    ...Object.fromEntries(ALL_ENTRY_POINTS.map((entry) => [`^${specifierOf(entry)}$`, `<rootDir>/${entry.source}`])),
    '^@kubernetes/client-node$': '<rootDir>/spec/support/clientNodeInJest.js',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 20000,
  detectOpenHandles: false,
};
