/**
 * The kubectl suite: the real kubectl against the loopback API server. Run with
 * `npm run test:kubectl`. When kubectl is not on PATH the suite says so and its tests are reported
 * as skipped, so a green run never hides that kubectl was not exercised.
 * @type {import('jest').Config}
 */
const base = require('./jest.config.js');

module.exports = {
  ...base,
  roots: ['<rootDir>/spec/kubectl'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 60000,
};
