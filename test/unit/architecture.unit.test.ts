import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Linter } from 'eslint';
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
