// The world each artifact role is built against. A guest is embedded with a
// generated world that includes its role's murmur world plus the imports
// the host links for that role whether or not they are granted (wasi:http
// for every role, tool-registry, shell, message and run-inference for
// tools, task-io and conversation for hooks, artifact-manager for script
// capsules). wit-component keeps
// only the imports the code actually calls, so a component names exactly
// the interfaces it uses.
import { WASI_VERSION } from './wit.mjs';

const http = `import wasi:http/outgoing-handler@${WASI_VERSION};`;

export const ROLES = {
  tool: [
    'murmur:runtime-guest/tool@0.1.0',
    http,
    'import murmur:tool-registry/invoke@0.1.0;',
    'import murmur:shell/execute@0.1.0;',
    'import murmur:message/send@0.1.0;',
    'import murmur:runtime/inference@0.2.0;',
  ],
  driver: ['murmur:runtime-guest/driver@0.1.0', http],
  capsule: ['murmur:runtime-guest/capsule@0.1.0', http, 'import murmur:artifact-manager/manage@0.1.0;'],
  hook: [
    'murmur:runtime/hook@0.2.0',
    http,
    'import murmur:task-io/read@0.1.0;',
    'import murmur:conversation/read@0.1.0;',
  ],
  'process-driver': ['murmur:driver/process-driver@0.1.0'],
  // An ACT component (sdk/go/act): the sync tool provider, and with
  // sdk/go/act/sessions the session provider (docs/act.md).
  act: ['murmur:act-guest/tools@0.1.0', http],
  'act-sessions': ['murmur:act-guest/tools-sessions@0.1.0', http],
};

export const ROOT_PACKAGE = 'murmur-build:guest';
export const ROOT_WORLD = 'guest';

// A JavaScript guest is not offered the tool imports the Go SDK wraps
// (tool-registry, shell, message, run-inference) up front: componentize-js
// keeps every import of the world whole (a module's calls cannot be
// traced statically), so each would be imported whether used or not. It
// gets them only on import, below.
const NOT_FOR_JS = new Set([
  'import murmur:tool-registry/invoke@0.1.0;',
  'import murmur:shell/execute@0.1.0;',
  'import murmur:message/send@0.1.0;',
  'import murmur:runtime/inference@0.2.0;',
  'import murmur:artifact-manager/manage@0.1.0;',
]);

// A JavaScript hook exports the lifecycle without the hook world's
// imports, which it gets only as JS_ON_IMPORT says.
const JS_BASE = { hook: 'export murmur:hook/lifecycle@0.5.0;' };

// JS_ON_IMPORT: the interfaces a JavaScript tool or hook is offered only
// when its module imports them by name. Whole imports drag in the
// interfaces whose types they use, functions and all:
// murmur:runtime/inference brings murmur:hook/lifecycle, and
// murmur:tool-registry/invoke brings murmur:tool/run with the tool's own
// run function. The host links those functions as traps
// (internal/component), so the component links, but a guest that does not
// use the import should not carry it.
const JS_ON_IMPORT = {
  capsule: ['murmur:artifact-manager/manage@0.1.0'],
  tool: [
    'murmur:tool-registry/invoke@0.1.0',
    'murmur:shell/execute@0.1.0',
    'murmur:message/send@0.1.0',
    'murmur:runtime/inference@0.2.0',
  ],
  hook: ['murmur:runtime/inference@0.2.0'],
};

// rootWorld renders the generated world for role; js for a componentize-js
// build, whose module imports the interfaces listed in imports.
export function rootWorld(role, { js = false, imports = [] } = {}) {
  const parts = ROLES[role];
  if (!parts) throw new Error(`unknown role "${role}": want one of ${Object.keys(ROLES).join(', ')}`);
  const [base, ...all] = parts;
  const extra = js ? all.filter((line) => !NOT_FOR_JS.has(line)) : all;
  if (js) {
    for (const iface of JS_ON_IMPORT[role] ?? []) {
      if (imports.includes(iface)) extra.push(`import ${iface};`);
    }
  }
  const head = js && JS_BASE[role] ? JS_BASE[role] : `include ${base};`;
  return `world ${ROOT_WORLD} {\n  ${head}\n  ${extra.join('\n  ')}\n}\n`;
}

// moduleImports lists the specifiers an ES module's source imports from.
export function moduleImports(source) {
  return [...source.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
}
