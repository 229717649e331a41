import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type express from 'express';

/**
 * The files of the service's pages (the dashboard, the buyer's page), served as they are written: no build
 * step, nothing in them filled in per request.
 */

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

type Loaded = Readonly<{ body: Buffer; type: string; etag: string }>;

/**
 * Each file read once, at its first request, and kept: they change only with a new release of the service (a
 * fixed set, named by the pages' modules: the map is as small as they are). A file that cannot be read (a build
 * that did not copy its folder) is a 500 that names it in the log, and is read again at the next request.
 */
const loaded = new Map<string, Promise<Loaded>>();
const load = (path: string): Promise<Loaded> => {
  let file = loaded.get(path);
  if (!file) {
    file = readFile(path).then((body) => ({
      body,
      type: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    }));
    file.catch(() => loaded.delete(path));
    loaded.set(path, file);
  }
  return file;
};

/**
 * The file, with a strong ETag of its content and `no-cache`: the browser keeps it and asks each time whether
 * it is still the one (a 304 with no body when it is), so a new release is seen at the next load. The app's
 * own ETags are off (they would hash every JSON answer); res.send answers 304 to a matching If-None-Match.
 */
export const sendFile = (res: express.Response, next: express.NextFunction, path: string): void => {
  load(path).then((file) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', file.etag);
    res.type(file.type).send(file.body);
  }, next);
};

/** A page's own files, by their path under the page's mount path: nothing else there is served. */
export const staticFiles =
  (files: ReadonlyMap<string, string>): express.RequestHandler =>
  (req, res, next) => {
    const path = req.method === 'GET' || req.method === 'HEAD' ? files.get(req.path) : undefined;
    if (path === undefined) next();
    else sendFile(res, next, path);
  };
