// A test guest for internal/wasi: run({data: URL}) fetches the URL
// (wasi:http underneath, redirects left to the caller) and returns
// "<status> <location or -> <body>", or fails with the fetch error. With
// "count:" before the URL it returns the body's length in bytes instead
// (the stream throughput benchmark); with "fnv:" the body's length and
// 32-bit FNV-1a hash, so a test can check every byte arrived unchanged.

export const run = {
  async run(input) {
    try {
      if (input.data.startsWith('fnv:')) {
        const r = await fetch(input.data.slice(4));
        const b = new Uint8Array(await r.arrayBuffer());
        let h = 0x811c9dc5;
        for (const c of b) {
          h = Math.imul(h ^ c, 0x01000193) >>> 0;
        }
        return { status: 'passed', data: `${b.length} ${h}`, truncated: false, metadata: [] };
      }
      if (input.data.startsWith('count:')) {
        const r = await fetch(input.data.slice(6));
        const n = (await r.arrayBuffer()).byteLength;
        return { status: 'passed', data: String(n), truncated: false, metadata: [] };
      }
      const r = await fetch(input.data, { redirect: 'manual' });
      const body = await r.text();
      return { status: 'passed', data: `${r.status} ${r.headers.get('location') ?? '-'} ${body}`, truncated: false, metadata: [] };
    } catch (e) {
      return { status: 'failed', summary: String(e), truncated: false, metadata: [] };
    }
  },
};
