import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type Setting, settingsOf } from '../../../src/infrastructure/config-settings.js';

// docs/operations.md is where an operator looks a setting up: its tables of variables (a `variable` and a
// `default` column) and src/infrastructure/config-settings.ts are kept in step here. A row names one or more
// variables, each in full, separated by ` / `; its default cell gives one default for all of them or one each,
// in the same order: `value` (with a gloss after it if need be, `900000` (15 min)), `empty`, or words for a
// value worked out from other settings.
const repoRoot = path.resolve(import.meta.dirname, '..', '..', '..');
const operationsFile = path.join(repoRoot, 'docs', 'operations.md');

type Row = { line: number; names: string[]; defaults: string[] };

/** The cells of a table line (a `\|` is a pipe inside a cell). */
const cellsOf = (line: string): string[] =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

/** The rows of every table whose first columns are `variable` and `default`. */
const rowsOf = (markdown: string): Row[] => {
  const rows: Row[] = [];
  let inTable = false;
  markdown.split('\n').forEach((line, index) => {
    if (!line.startsWith('|')) {
      inTable = false;
      return;
    }
    const cells = cellsOf(line);
    if (cells[0] === 'variable' && cells[1] === 'default') inTable = true;
    else if (inTable && !/^-+$/.test(cells[0] ?? ''))
      rows.push({
        line: index + 1,
        names: (cells[0] ?? '').split(' / '),
        defaults: (cells[1] ?? '').split(' / '),
      });
  });
  return rows;
};

/** A documented default as the variable would hold it; null for words (a value worked out from others). */
const documentedValue = (cell: string): string | null => {
  if (cell === 'empty') return '';
  return /^`([^`]*)`/.exec(cell)?.[1] ?? null;
};

/** What a setting holds when its variable is unset, when that is a value of its own (not worked out, not none). */
const defaultOf = (setting: Setting): unknown => {
  const unset = setting.schema.safeParse(undefined);
  return unset.success ? (unset.data ?? null) : null;
};

const settings = new Map(settingsOf().map(({ setting }) => [setting.env, setting]));
const rows = rowsOf(readFileSync(operationsFile, 'utf8'));
const documented = rows.flatMap((row) =>
  row.names.map((name, i) => ({
    line: row.line,
    name: /^`([A-Z][A-Z0-9_]*)`$/.exec(name)?.[1] ?? name,
    defaultCell: (row.defaults.length === 1 ? row.defaults[0] : row.defaults[i]) ?? '',
  })),
);

describe('docs/operations.md and the settings', () => {
  it('finds the tables of variables', () => {
    expect(rows.length).toBeGreaterThan(20);
  });

  it('declares each variable once', () => {
    const envs = settingsOf().map(({ setting }) => setting.env);
    expect(envs.filter((env, i) => envs.indexOf(env) !== i)).toEqual([]);
  });

  it('names each variable in full, and gives one default for a row or one for each variable', () => {
    const malformed = rows.filter(
      (row) =>
        row.names.some((name) => !/^`[A-Z][A-Z0-9_]*`$/.test(name)) ||
        (row.defaults.length !== 1 && row.defaults.length !== row.names.length),
    );
    expect(malformed.map(({ line, names }) => `${line}: ${names.join(' / ')}`)).toEqual([]);
  });

  it('has a row for every setting, and one only', () => {
    const names = documented.map(({ name }) => name);
    expect([...settings.keys()].filter((env) => !names.includes(env))).toEqual([]);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('documents no variable that is not a setting', () => {
    expect(
      documented.filter(({ name }) => !settings.has(name)).map(({ line, name }) => `${line}: ${name}`),
    ).toEqual([]);
  });

  it('gives the default of every setting that has one', () => {
    const wrong = documented.flatMap(({ line, name, defaultCell }) => {
      const setting = settings.get(name);
      if (!setting) return [];
      const fallback = defaultOf(setting);
      const value = documentedValue(defaultCell);
      if (fallback === null) return [];
      const read = value === null ? null : setting.schema.safeParse(value);
      if (read?.success && isDeepStrictEqual(read.data, fallback)) return [];
      return [`${line}: ${name} is documented as ${defaultCell}, its default is ${JSON.stringify(fallback)}`];
    });
    expect(wrong).toEqual([]);
  });
});
