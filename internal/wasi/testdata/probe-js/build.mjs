// build.mjs OUT builds index.js into a murmur tool component with fetch
// enabled. The repository's guest toolchain (tools/guest) disables
// componentize-js's wasi:http support for ordinary guests; this test guest
// needs it to exercise the host's wasi:http from real JS, so it reuses the
// toolchain's WIT assembly and asks componentize-js for the http feature.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../../..');
const guest = path.join(root, 'tools/guest');
const out = path.resolve(process.argv[2]);

const { readPackages, wasiPackages, source } = await import(pathToFileURL(path.join(guest, 'lib/wit.mjs')));
const { rootWorld, ROOT_PACKAGE, ROOT_WORLD } = await import(pathToFileURL(path.join(guest, 'lib/worlds.mjs')));
const { componentize } = await import(
  pathToFileURL(path.join(guest, 'node_modules/@bytecodealliance/componentize-js/src/componentize.js')));

const packages = new Map([...readPackages(path.join(root, 'wit')), ...wasiPackages()]);
const dir = fs.mkdtempSync(path.join(path.dirname(out), '.wit-'));
try {
  fs.writeFileSync(path.join(dir, 'guest.wit'), source(ROOT_PACKAGE, rootWorld('tool', { js: true }), packages));
  const { component } = await componentize({
    sourcePath: path.join(here, 'index.js'),
    witPath: dir,
    worldName: `${ROOT_PACKAGE}/${ROOT_WORLD}`,
    disableFeatures: ['fetch-event'],
  });
  fs.writeFileSync(out, component);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
