import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import {
  DASHBOARD_DIR,
  DASHBOARD_FILES,
  DASHBOARD_PAGE_FILE,
} from '../../../src/adapters/http/dashboard-files.js';

const html = readFileSync(DASHBOARD_PAGE_FILE, 'utf8');

/** Every tag of a kind in the page, with its attributes as written and what it holds up to its end tag. */
const elements = (tag: string): Array<{ attributes: string; content: string }> =>
  [...html.matchAll(new RegExp(`<${tag}\\b([^>]*)>([\\s\\S]*?)</${tag}>`, 'gi'))].map((m) => ({
    attributes: m[1] ?? '',
    content: m[2] ?? '',
  }));

describe("the dashboard's files (src/adapters/http/dashboard)", () => {
  it('are real files beside the module that serves them, and each one of them is served', () => {
    expect(existsSync(DASHBOARD_PAGE_FILE)).toBe(true);
    for (const path of DASHBOARD_FILES.values())
      expect({ path, exists: existsSync(path) }).toEqual({ path, exists: true });
    const served = new Set([DASHBOARD_PAGE_FILE, ...DASHBOARD_FILES.values()]);
    for (const name of readdirSync(DASHBOARD_DIR))
      expect({ name, served: served.has(join(DASHBOARD_DIR, name)) }).toEqual({ name, served: true });
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

  it('loads only the files served under /dashboard, each by a URL relative to the page', () => {
    const urls = [...html.matchAll(/\s(?:src|href)="([^"]*)"/gi)].map((m) => m[1]);
    expect(urls.sort()).toEqual([...DASHBOARD_FILES.keys()].map((path) => `dashboard${path}`).sort());
  });

  it('has a script that is a classic script a <script src> tag runs as it is, with no build step', () => {
    const source = readFileSync(DASHBOARD_FILES.get('/dashboard.js')!, 'utf8');
    // compiled, not run: an import, an export or a syntax error would throw here
    expect(() => new Script(source, { filename: 'dashboard.js' })).not.toThrow();
    expect(source).toContain("fetch('api/v1/admin/dashboard'");
    expect(source).not.toMatch(
      /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(/,
    );
  });
});
