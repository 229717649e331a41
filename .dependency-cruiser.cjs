/**
 * Layering rules (hexagonal): domain <- application <- adapters <- infrastructure; src/client talks to the
 * service over HTTP only.
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
  '@opentelemetry',
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
      name: 'client-talks-http-only',
      comment:
        'src/client is a client of the HTTP API: it knows the service by its URL, not by its code. Its imports ' +
        'from the service are the token signer, so that its tokens are the ones the API accepts, and the order ' +
        "route's refusal codes, so that it counts the answers the API gives.",
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        path: '^src/(domain|application|adapters|infrastructure)/',
        pathNot: '^src/adapters/http/(tokens|order-rejections)\\.ts$',
      },
    },
    {
      name: 'client-talks-http-only',
      comment: 'src/client may not import the server-side framework and driver packages.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: `(^|/)node_modules/(@types/)?(${FRAMEWORK_PACKAGES})(/|$)|^(${FRAMEWORK_PACKAGES})(/|$)` },
    },
    {
      name: 'nothing-depends-on-the-client',
      comment: 'The service never needs its load client; only the CLI (src/infrastructure/main.ts) runs it.',
      severity: 'error',
      from: { path: '^src/(domain|application|adapters)/' },
      to: { path: '^src/client/' },
    },
    {
      name: 'inversify-in-the-composition-root-only',
      comment:
        'Only src/infrastructure/container.ts and profiles.ts know inversify: the rest is wired by compose() with ' +
        'plain constructors, and nothing asks a container for a dependency.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/infrastructure/(container|profiles)\\.ts$' },
      to: { path: '(^|/)node_modules/inversify(/|$)|^inversify(/|$)' },
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
