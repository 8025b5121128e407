// Assembles one WIT source text from the repository's wit/ tree, the WASI
// 0.2 packages jco ships, and a generated root package holding the world a
// guest is built against. jco's embed API cannot read a directory (its WASI
// shim has no preopens), so every package travels inline as a nested
// `package ns:name@x.y.z { ... }` block.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// The WASI release the jco preview1 adapter imports; guests that import
// wasi:http directly must use the same one.
export const WASI_VERSION = '0.2.12';

const PACKAGE_RE = /^\s*package\s+([a-z0-9-]+:[a-z0-9-]+(?:\/[a-z0-9-]+)*@[0-9A-Za-z.+-]+)\s*;/m;

// readPackages returns a map from "ns:name@version" to the concatenated body
// of every .wit file of each package directory under root.
export function readPackages(root) {
  const pkgs = new Map();
  for (const dir of fs.readdirSync(root).sort()) {
    const full = path.join(root, dir);
    if (!fs.statSync(full).isDirectory()) continue;
    for (const file of fs.readdirSync(full).sort()) {
      if (!file.endsWith('.wit')) continue;
      const text = fs.readFileSync(path.join(full, file), 'utf8');
      const m = PACKAGE_RE.exec(text);
      if (!m) throw new Error(`${path.join(dir, file)}: no versioned package declaration`);
      const body = text.slice(0, m.index) + text.slice(m.index + m[0].length);
      pkgs.set(m[1], (pkgs.get(m[1]) ?? '') + '\n' + body);
    }
  }
  return pkgs;
}

// wasiPackages reads the WASI packages bundled with jco.
export function wasiPackages() {
  const jcoMain = require.resolve('@bytecodealliance/jco');
  const base = path.join(path.dirname(jcoMain), '..', 'lib', 'wit', 'builtin', WASI_VERSION);
  return readPackages(base);
}

// source renders the root package text followed by every package nested.
export function source(rootPackage, rootBody, packages) {
  let out = `package ${rootPackage};\n${rootBody}\n`;
  for (const [name, body] of packages) {
    out += `\npackage ${name} {\n${body}\n}\n`;
  }
  return out;
}
