/**
 * Layering rules (hexagonal): domain <- application <- adapters <- infrastructure.
 * Used by `npm run depcruise` and by test/unit/architecture.unit.test.ts.
 * Paths are relative to the directory the cruise runs from (baseDir).
 */
const NPM_AND_CORE = [
  'core',
  'npm',
  'npm-dev',
  'npm-optional',
  'npm-peer',
  'npm-bundled',
  'npm-no-pkg',
  'npm-unknown',
];

/** Infrastructure-flavoured packages the application layer must not know about. */
const FRAMEWORK_PACKAGES = [
  'inversify',
  'express',
  'ioredis',
  'kafkajs',
  'agenda',
  '@agendajs',
  '@mikro-orm',
  'pino',
  'prom-client',
  'jose',
]
  .map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  .join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain is pure TypeScript: no outer layer.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(application|adapters|infrastructure)/' },
    },
    {
      name: 'domain-is-pure',
      comment: 'src/domain is pure TypeScript: no npm package and no node core module.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { dependencyTypes: NPM_AND_CORE },
    },
    {
      name: 'application-no-adapters',
      comment: 'src/application talks to the world through ports only: no adapter or infrastructure code.',
      severity: 'error',
      from: { path: '^src/application/' },
      to: { path: '^src/(adapters|infrastructure)/' },
    },
    {
      name: 'application-no-adapters',
      comment: 'src/application may not import framework/driver packages (nor their @types).',
      severity: 'error',
      from: { path: '^src/application/' },
      to: { path: `(^|/)node_modules/(@types/)?(${FRAMEWORK_PACKAGES})(/|$)|^(${FRAMEWORK_PACKAGES})(/|$)` },
    },
    {
      name: 'adapters-no-infrastructure',
      comment: 'Adapters are wired by infrastructure, never the other way round.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/infrastructure/' },
    },
    {
      name: 'no-circular',
      comment: 'Circular dependencies make layering and module init order fragile.',
      severity: 'warn',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
