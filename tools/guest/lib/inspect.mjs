// Reading a built component's world back, to prove what it imports and
// exports.
import { componentWit } from '@bytecodealliance/jco';
import { WASI_VERSION } from './wit.mjs';

// surface returns the component's import and export lines, sorted, split
// into the WASI ones and the rest.
export async function surface(bytes) {
  const wit = await componentWit(bytes);
  const lines = wit
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('import ') || l.startsWith('export '))
    .sort();
  return {
    wasi: lines.filter((l) => / wasi:/.test(l)),
    murmur: lines.filter((l) => !/ wasi:/.test(l)),
  };
}

// badWasi returns the WASI lines that are not imports at WASI_VERSION.
export function badWasi(lines) {
  return lines.filter((l) => !(l.startsWith('import wasi:') && l.endsWith(`@${WASI_VERSION};`)));
}
