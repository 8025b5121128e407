// componentize.mjs turns a guest into a murmur component.
//
//   node componentize.mjs --role tool --core linked.wasm --out x.wasm
//   node componentize.mjs --role tool --js index.js --out x.wasm
//
// --core takes a core module that tools/wasmlink has post-linked; it is
// embedded with the role's world and wrapped with jco's preview1 reactor
// adapter. --js takes an ES module, built with componentize-js.
// --wit names the repository's wit/ directory (default: ../../wit).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { componentEmbed, componentNew, preview1AdapterReactorPath } from '@bytecodealliance/jco';
import { readPackages, wasiPackages, source } from './lib/wit.mjs';
import { moduleImports, rootWorld, ROOT_PACKAGE, ROOT_WORLD } from './lib/worlds.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    role: { type: 'string' },
    core: { type: 'string' },
    js: { type: 'string' },
    out: { type: 'string' },
    wit: { type: 'string', default: path.join(here, '..', '..', 'wit') },
  },
});
if (!values.role || !values.out || (!values.core === !values.js)) {
  console.error('usage: componentize.mjs --role ROLE (--core FILE | --js FILE) --out FILE [--wit DIR]');
  process.exit(2);
}

const packages = new Map([...readPackages(values.wit), ...wasiPackages()]);
const imports = values.js ? moduleImports(fs.readFileSync(values.js, 'utf8')) : [];
const witSource = source(ROOT_PACKAGE, rootWorld(values.role, { js: Boolean(values.js), imports }), packages);

let component;
if (values.core) {
  const core = fs.readFileSync(values.core);
  const embedded = await componentEmbed({ binary: core, witSource, world: ROOT_WORLD });
  const adapter = fs.readFileSync(preview1AdapterReactorPath());
  component = await componentNew(embedded, [['wasi_snapshot_preview1', adapter]]);
} else {
  const { componentize } = await import('@bytecodealliance/componentize-js');
  // componentize-js reads the WIT from disk, so the assembled source goes
  // to a temporary directory for it.
  const dir = fs.mkdtempSync(path.join(path.dirname(path.resolve(values.out)), '.wit-'));
  try {
    fs.writeFileSync(path.join(dir, 'guest.wit'), witSource);
    const result = await componentize({
      sourcePath: path.resolve(values.js),
      witPath: dir,
      worldName: `${ROOT_PACKAGE}/${ROOT_WORLD}`,
      // A script capsule's stdout is its answer (docs/script-capsules.md),
      // so it keeps stdio and console.log reaches it.
      disableFeatures: ['random', 'clocks', ...(values.role === 'capsule' ? [] : ['stdio']), 'http', 'fetch-event'],
    });
    component = result.component;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
fs.mkdirSync(path.dirname(path.resolve(values.out)), { recursive: true });
fs.writeFileSync(values.out, component);
