// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * `max-params` that leaves constructors alone: DI classes (inversify) legitimately
 * take many constructor parameters. Wraps @typescript-eslint/max-params (which
 * already ignores a `this: void` parameter) and drops constructor functions.
 * @type {import('eslint').Rule.RuleModule}
 */
const maxParamsExceptConstructors = (() => {
  const base = /** @type {import('eslint').Rule.RuleModule} */ (
    /** @type {unknown} */ (tseslint.plugin.rules?.['max-params'])
  );
  /** @param {any} node */
  const isConstructor = (node) =>
    node.parent?.type === 'MethodDefinition' && node.parent.kind === 'constructor';
  return {
    meta: { ...base.meta, docs: { description: 'max-params, constructors exempt' } },
    create(context) {
      const listeners = base.create(context);
      /** @type {Record<string, (node: any) => void>} */
      const wrapped = {};
      for (const [selector, listener] of Object.entries(listeners)) {
        wrapped[selector] = (node) => {
          if (!isConstructor(node)) /** @type {(n: any) => void} */ (listener)(node);
        };
      }
      return wrapped;
    },
  };
})();

/**
 * The domain is the one home of its events: outside src/domain, no code writes an object literal with a
 * domain event's `type` (an event built by hand is an event `decide` did not make). Kept in step with the
 * domain's EVENT_SCHEMA_VERSIONS by test/unit/architecture.unit.test.ts, which also runs it over src.
 */
export const DOMAIN_EVENT_TYPES = [
  'OrderReserved',
  'StockCommitted',
  'ReservationReleased',
  'OrderPaid',
  'ProductListed',
  'StockAdded',
  'StockReconciled',
];
export const eventsOnlyFromTheDomain = {
  selector: `Property[key.name='type'][value.value=/^(${DOMAIN_EVENT_TYPES.join('|')})$/]`,
  message: 'a domain event is made by a decider in src/domain, never by hand: run a command through it',
};

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bin/**',
      'bench/results/**',
      'test/unit/fixtures/**',
      'jest.config.js',
      'eslint.config.js',
      '.dependency-cruiser.cjs',
    ],
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: {
      local: { rules: { 'max-params': maxParamsExceptConstructors } },
    },
    rules: {
      'no-restricted-syntax': ['error', eventsOnlyFromTheDomain],
      // complexity limits, in the spirit of castore
      complexity: ['error', 15],
      'max-depth': ['error', 4],
      'max-params': 'off',
      '@typescript-eslint/max-params': 'off',
      'local/max-params': ['error', { max: 5, countVoidThis: false }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // A store reaches the database only through the session it was given: inside a unit of work that is the
    // transaction's connection. Taking a connection of its own would run outside the transaction (not
    // seeing its writes) and, under load, wait for a pool that only the waiting transactions can free.
    files: ['src/adapters/mysql/mysql-{event-store,inventory,order-read-model,outbox}.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        eventsOnlyFromTheDomain,
        ...['getConnection', 'getKnex', 'fork', 'transactional', 'begin', 'execute', 'getDriver'].map(
          (name) => ({
            selector: `CallExpression[callee.property.name='${name}'][callee.object.name!='sql']`,
            message: `a store must not call ${name}(): use the session's em and sql, which a unit of work binds to its transaction`,
          }),
        ),
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: './mysql-sql.js', importNames: ['pooledStatements', 'statementsOn'] }],
        },
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
