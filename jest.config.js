// @ts-check
import { createDefaultEsmPreset } from 'ts-jest';

/**
 * ts-jest in ESM mode. Type checking is NOT done here: tsconfig.json sets
 * `isolatedModules: true`, which makes ts-jest 29.4 transpile each file on its
 * own (ts.transpileModule) instead of running a language service. Types are
 * checked by `npm run typecheck`.
 */
const esmPreset = createDefaultEsmPreset({ tsconfig: '<rootDir>/tsconfig.json' });

/**
 * Every project needs its own transform etc.: projects don't inherit root config.
 * @param {string} name
 * @param {string[]} testMatch
 * @param {import('jest').Config} [extra]
 * @returns {import('jest').Config}
 */
const project = (name, testMatch, extra = {}) => ({
  ...esmPreset,
  displayName: name,
  rootDir: import.meta.dirname,
  testEnvironment: 'node',
  testMatch: testMatch.map((glob) => `<rootDir>/${glob}`),
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/dist/', '<rootDir>/test/unit/fixtures/'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  ...extra,
});

/**
 * The tiers that talk to Kafka share one 3-broker cluster per run, started by the first of them to run and
 * stopped after the last (a tier's global setup runs only when one of its tests is selected).
 */
const withKafka = {
  globalSetup: '<rootDir>/test/support/kafka-global-setup.js',
  globalTeardown: '<rootDir>/test/support/kafka-global-teardown.js',
};

/** @type {import('jest').Config} */
const config = {
  projects: [
    project('unit', ['test/unit/**/*.unit.test.ts']),
    project('contract', ['test/contract/**/*.test.ts']),
    project('int', ['test/integration/**/*.int.test.ts'], withKafka),
    project('e2e', ['test/e2e/**/*.e2e.test.ts'], withKafka),
    project('chaos', ['test/chaos/**/*.test.ts'], withKafka),
    project('scale', ['test/scale/**/*.scale.test.ts'], withKafka),
  ],
  // jest-circus (30.x) reads testTimeout from the GLOBAL config only; a per-project
  // value is accepted but ignored, so it is set here and applies to every project.
  testTimeout: 60_000,
  forceExit: false,
  coverageDirectory: 'coverage',
  coveragePathIgnorePatterns: ['/node_modules/', '/test/'],
};

export default config;
