import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import { SERVICE_NODE_FLAGS } from '../../../src/infrastructure/node-flags.js';

const root = new URL('../../../', import.meta.url);

describe("the service's V8 settings", () => {
  it('are the ones `npm start` and `bin/seckill` run the service with', async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const start = pkg.scripts['start']!.split(' ');
    expect(start.slice(1, 1 + SERVICE_NODE_FLAGS.length)).toEqual(SERVICE_NODE_FLAGS);
    const shebang = (await readFile(new URL('bin/seckill.js', root), 'utf8')).split('\n')[0]!;
    expect(shebang).toBe(`#!/usr/bin/env -S node ${SERVICE_NODE_FLAGS.join(' ')}`);
  });
});
