/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // The kubectl suite runs on its own (npm run test:kubectl) so that its absence is said plainly.
  testPathIgnorePatterns: ['/node_modules/', '/spec/kubectl/'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 20000,
  detectOpenHandles: false,
};
