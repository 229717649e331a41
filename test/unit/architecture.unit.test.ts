import { describe, expect, it } from '@jest/globals';
import path from 'node:path';
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

  it('the rules bite: a domain module importing the application layer is reported', async () => {
    const result = await cruiseFrom(path.join(repoRoot, 'test', 'unit', 'fixtures', 'layering'));

    expect(errorsOf(result).map(describeViolation)).toEqual([
      'domain-is-pure: src/domain/bad.ts -> src/application/port.ts',
    ]);
  });
});
