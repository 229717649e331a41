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

/**
 * The application writes events, the projections they keep in step and the outbox rows they send through the
 * command handler only (`commands.write`): a use case that opens a transaction of its own, or appends,
 * projects, adds outbox rows or dispatches by hand, bypasses it.
 */
export const writesThroughTheHandler = [
  {
    selector: `CallExpression[callee.property.name=/^(append|appendMany|upsert|upsertMany|addMany|dispatchSoon)$/]`,
    message:
      'events, projections and outbox rows are written by the command handler: use commands.write(plan)',
  },
  {
    selector: `CallExpression[callee.property.name='add'][callee.object.property.name='outbox']`,
    message: 'outbox rows are added by the command handler: use commands.write(plan)',
  },
  {
    selector: `Identifier[name='unitOfWork']`,
    message:
      'a use case does not open transactions: the command handler runs its plan in one (commands.write)',
  },
];

/**
 * A source file over `max` lines opens with a one-line `//` comment saying why it is long (a file that is a list,
 * a document): anything else that long is split.
 * @type {import('eslint').Rule.RuleModule}
 */
const longFileSaysWhy = {
  meta: {
    type: 'suggestion',
    schema: [{ type: 'object', properties: { max: { type: 'integer' } }, additionalProperties: false }],
    messages: {
      long: 'this file has {{lines}} lines: split it, or open it with a one-line // comment saying why',
    },
  },
  create(context) {
    const max = /** @type {{ max?: number } | undefined} */ (context.options[0])?.max ?? 300;
    return {
      Program(node) {
        const lines = context.sourceCode.lines;
        const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
        if (count <= max) return;
        const first = context.sourceCode.getAllComments()[0];
        if (first?.type === 'Line' && first.loc?.start.line === 1 && first.value.trim().length >= 12) return;
        context.report({
          node,
          loc: { line: 1, column: 0 },
          messageId: 'long',
          data: { lines: String(count) },
        });
      },
    };
  },
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
      local: { rules: { 'max-params': maxParamsExceptConstructors, 'long-file-says-why': longFileSaysWhy } },
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
    files: ['src/**/*.ts'],
    rules: { 'local/long-file-says-why': ['error', { max: 300 }] },
  },
  {
    files: ['src/application/**/*.ts'],
    // the handler itself, the projections registered with it, and the ports that declare the writes
    ignores: [
      'src/application/command-handler.ts',
      'src/application/order-stream.ts',
      'src/application/ports/**',
      'src/application/stock-books.ts',
    ],
    rules: { 'no-restricted-syntax': ['error', eventsOnlyFromTheDomain, ...writesThroughTheHandler] },
  },
  {
    // reads a product's stock and orders in one transaction that writes nothing (one consistent view of MySQL):
    // the one file of the application besides the handler that opens a transaction, and it must never write
    files: ['src/application/stock-books.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        eventsOnlyFromTheDomain,
        ...writesThroughTheHandler.filter((rule) => !rule.selector.includes("'unitOfWork'")),
      ],
    },
  },
  {
    // the dashboard's script: plain browser JavaScript, loaded by a <script> tag after uPlot's, no build step
    files: ['src/adapters/http/dashboard/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'addEventListener',
          'document',
          'fetch',
          'history',
          'location',
          'sessionStorage',
          'setInterval',
          'uPlot',
          'URLSearchParams',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: { complexity: ['error', 15], 'max-depth': ['error', 4], strict: ['error', 'function'] },
  },
  {
    // the buyer's page's script: plain browser JavaScript, loaded by a <script> tag, no build step
    files: ['src/adapters/http/sale/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(
        [
          'AbortSignal',
          'atob',
          'crypto',
          'document',
          'EventSource',
          'fetch',
          'location',
          'sessionStorage',
          'setInterval',
          'setTimeout',
          'URL',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: { complexity: ['error', 15], 'max-depth': ['error', 4], strict: ['error', 'function'] },
  },
  {
    // the build's own plain Node scripts (npm run build runs them after tsc)
    files: ['scripts/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: { URL: 'readonly' } },
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
