/**
 * The real-clients suite: kubectl and the Python client (`python3-kubernetes`) against the
 * loopback API server. Run with `npm run test:kubectl`. When a client is missing (kubectl not on
 * PATH, no python3, or a python3 without the `kubernetes` module) the suite says so and its tests
 * are reported as skipped, so a green run never hides that a client was not exercised.
 * @type {import('jest').Config}
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/spec/clients'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60000,
};
