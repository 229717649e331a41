import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { DOMAIN_EVENT_TYPES, eventsOnlyFromTheDomain } from '../../eslint.config.js';
import { EVENT_SCHEMA_VERSIONS } from '../../src/domain/index.js';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// Same rules as `npm run depcruise` (.dependency-cruiser.cjs), run through the API.
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const tsConfigFile = path.join(repoRoot, 'tsconfig.json');

async function cruiseFrom(baseDir: string): Promise<ICruiseResult> {
  const options: ICruiseOptions = await extractDepcruiseOptions(
    path.join(repoRoot, '.dependency-cruiser.cjs'),
  );
  const result = await cruise(
    ['src'],
    { ...options, baseDir, tsConfig: { fileName: tsConfigFile }, outputType: 'json' },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  const output =
    typeof result.output === 'string' ? (JSON.parse(result.output) as ICruiseResult) : result.output;
  return output;
}

const errorsOf = (result: ICruiseResult): IViolation[] =>
  result.summary.violations.filter((violation) => violation.rule.severity === 'error');

const describeViolation = (violation: IViolation): string =>
  `${violation.rule.name}: ${violation.from} -> ${violation.to}`;

describe('architecture (dependency-cruiser)', () => {
  it('src has no error-severity layering violations', async () => {
    const result = await cruiseFrom(repoRoot);

    expect(result.summary.totalCruised).toBeGreaterThan(0);
    expect(errorsOf(result).map(describeViolation)).toEqual([]);
  });

  it('the rules bite: a domain module or the load client importing the application layer is reported', async () => {
    const result = await cruiseFrom(path.join(repoRoot, 'test', 'unit', 'fixtures', 'layering'));

    expect(errorsOf(result).map(describeViolation).sort()).toEqual([
      'client-talks-http-only: src/client/bad.ts -> src/application/port.ts',
      'domain-is-pure: src/domain/bad.ts -> src/application/port.ts',
    ]);
  });
});

describe('the domain is the one home of its events', () => {
  const lint = (code: string, filePath: string) =>
    new Linter({ configType: 'flat' }).verify(
      code,
      [
        {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser },
          rules: { 'no-restricted-syntax': ['error', eventsOnlyFromTheDomain] },
        },
      ],
      filePath,
    );

  it('the lint rule knows every event type the domain has', () => {
    expect([...DOMAIN_EVENT_TYPES].sort()).toEqual(Object.keys(EVENT_SCHEMA_VERSIONS).sort());
  });

  it('reports an event built by hand, and not a check of an event type', () => {
    const built = lint(
      "const e = { type: 'OrderReserved', data: { orderId: 'o' } };\nif (e.type === 'StockCommitted') {}",
      'src/application/by-hand.ts',
    );

    expect(built.map((m) => m.line)).toEqual([1]);
  });

  it('no file in src outside src/domain builds a domain event', () => {
    const offenders = readdirSync(path.join(repoRoot, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.startsWith(`domain${path.sep}`))
      .flatMap((file) =>
        lint(readFileSync(path.join(repoRoot, 'src', file), 'utf8'), file).map((m) => `${file}:${m.line}`),
      );

    expect(offenders).toEqual([]);
  });
});

describe('every write goes through the command handler', () => {
  // the project's own lint configuration, as `npm run lint` runs it
  const eslint = new ESLint({ cwd: repoRoot });
  const lint = async (code: string, file: string): Promise<string[]> => {
    const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
    return (result?.messages ?? [])
      .filter((m) => m.ruleId === 'no-restricted-syntax')
      .map((m) => `${m.line}: ${m.message}`);
  };

  // a use case as they were written before the handler owned the write: its own transaction, its own append,
  // projection, outbox rows and dispatch
  const bypassing = `import type { EventStore, Outbox, OrderReadModel, UnitOfWork, OrderView } from '../ports/index.js';
import type { OutboxDispatcher } from '../outbox-dispatcher.js';

export class PayByHand {
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dispatcher: OutboxDispatcher,
  ) {}

  async execute(row: OrderView): Promise<void> {
    await this.unitOfWork.run(async (stores) => {
      await stores.events.appendMany([]);
      await stores.orders.upsert(row);
      await stores.outbox.addMany([], row.updatedAt);
    });
    this.dispatcher.dispatchSoon([]);
  }
}
`;

  it('a use case that writes by hand fails the lint, at each write', async () => {
    // linted as if it were pay-order's file: the type-aware lint parses only the project's own files
    const messages = await lint(bypassing, 'src/application/use-cases/pay-order.use-case.ts');

    expect(messages.map((m) => Number(m.split(':')[0]))).toEqual([6, 11, 12, 13, 14, 16]);
    expect(messages.join('\n')).toContain('commands.write');
  });

  it('the use cases of the application pass it', async () => {
    const dir = path.join(repoRoot, 'src', 'application', 'use-cases');
    const files = readdirSync(dir).filter((file) => file.endsWith('.ts'));
    const offenders = await Promise.all(
      files.map(async (file) => {
        const relative = path.join('src', 'application', 'use-cases', file);
        return (await lint(readFileSync(path.join(repoRoot, relative), 'utf8'), relative)).map(
          (m) => `${file}:${m}`,
        );
      }),
    );

    expect(files.length).toBeGreaterThan(10);
    expect(offenders.flat()).toEqual([]);
  });
});
