/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // The real-clients suite (kubectl, the Python client) runs on its own (npm run test:kubectl), so that a missing client is said plainly.
  testPathIgnorePatterns: ['/node_modules/', '/spec/clients/'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 20000,
  detectOpenHandles: false,
};
