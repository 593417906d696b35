/** Jest in its ES module mode (`npm run test:jest` runs it under node --experimental-vm-modules): ts-jest compiles to ES modules. */
export default {
  testEnvironment: 'node',
  testMatch: ['**/src/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  // `./controller.js` in a source is `./controller.ts` on disk.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
};
