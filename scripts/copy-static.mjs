// The files the service serves as they are written (tsc compiles only TypeScript): `npm run build` copies them
// from src into dist/src after tsc, so that the built service finds them beside its modules, as the sources do.
// Each folder is copied afresh: a file deleted from src is gone from dist too.
import { cpSync, rmSync } from 'node:fs';

const FOLDERS = ['src/adapters/http/dashboard', 'src/adapters/http/sale'];

const root = new URL('../', import.meta.url);
for (const folder of FOLDERS) {
  const to = new URL(`dist/${folder}/`, root);
  rmSync(to, { recursive: true, force: true });
  cpSync(new URL(`${folder}/`, root), to, { recursive: true });
}
