import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import {
  DASHBOARD_DIR,
  DASHBOARD_FILES,
  DASHBOARD_PAGE_FILE,
} from '../../../src/adapters/http/dashboard-files.js';
import { SALE_DIR, SALE_FILES, SALE_PAGE_FILE } from '../../../src/adapters/http/sale-page.js';

/** Every tag of a kind in the page, with its attributes as written and what it holds up to its end tag. */
const elementsIn = (html: string, tag: string): Array<{ attributes: string; content: string }> =>
  [...html.matchAll(new RegExp(`<${tag}\\b([^>]*)>([\\s\\S]*?)</${tag}>`, 'gi'))].map((m) => ({
    attributes: m[1] ?? '',
    content: m[2] ?? '',
  }));

const PAGES = [
  {
    name: 'the dashboard',
    dir: DASHBOARD_DIR,
    files: DASHBOARD_FILES,
    pageFile: DASHBOARD_PAGE_FILE,
    /** the page is /dashboard: its files are dashboard/… relative to it */
    prefix: 'dashboard',
    script: '/dashboard.js',
    calls: "fetch('api/v1/admin/dashboard'",
  },
  {
    name: "the buyer's page",
    dir: SALE_DIR,
    files: SALE_FILES,
    pageFile: SALE_PAGE_FILE,
    /** the page is /sale/{productId}: its files are beside it */
    prefix: '',
    script: '/sale.js',
    calls: 'new EventSource(',
  },
];

describe.each(PAGES)("$name's files", (page) => {
  const { dir, files, pageFile } = page;
  const html = readFileSync(pageFile, 'utf8');
  const elements = (tag: string) => elementsIn(html, tag);

  it('are real files beside the module that serves them, and each one of them is served', () => {
    expect(existsSync(pageFile)).toBe(true);
    for (const path of files.values())
      expect({ path, exists: existsSync(path) }).toEqual({ path, exists: true });
    const served = new Set([pageFile, ...files.values()]);
    for (const name of readdirSync(dir))
      expect({ name, served: served.has(join(dir, name)) }).toEqual({ name, served: true });
  });

  it('has a page with no inline script or style for its policy to allow', () => {
    const scripts = elements('script');
    expect(scripts.length).toBeGreaterThan(0);
    for (const { attributes, content } of scripts) {
      expect(attributes).toMatch(/\ssrc="[^"]+"/);
      expect(content.trim()).toBe('');
    }
    // as many <script> tags as were found with their end tags: none left unclosed, holding the rest of the page
    expect(html.match(/<script\b/gi)).toHaveLength(scripts.length);
    expect(html).not.toMatch(/<style\b/i);
    // no event handler or style attribute, no javascript: URL
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/\sstyle\s*=/i);
    expect(html).not.toMatch(/javascript:/i);
  });

  it('loads only its own files, each by a URL relative to the page', () => {
    const urls = [...html.matchAll(/\s(?:src|href)="([^"]*)"/gi)].map((m) => m[1]);
    const relative = (path: string) => (page.prefix ? `${page.prefix}${path}` : path.slice(1));
    expect(urls.sort()).toEqual([...files.keys()].map(relative).sort());
  });

  it('has a script that is a classic script a <script src> tag runs as it is, with no build step', () => {
    const source = readFileSync(files.get(page.script)!, 'utf8');
    // compiled, not run: an import, an export or a syntax error would throw here
    expect(() => new Script(source, { filename: page.script })).not.toThrow();
    expect(source).toContain(page.calls);
    expect(source).not.toMatch(
      /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(/,
    );
  });
});
