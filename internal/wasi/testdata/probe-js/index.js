// A test guest for internal/wasi: run({data: URL}) fetches the URL
// (wasi:http underneath, redirects left to the caller) and returns
// "<status> <location or -> <body>", or fails with the fetch error.

export const run = {
  async run(input) {
    try {
      const r = await fetch(input.data, { redirect: 'manual' });
      const body = await r.text();
      return { status: 'passed', data: `${r.status} ${r.headers.get('location') ?? '-'} ${body}`, truncated: false, metadata: [] };
    } catch (e) {
      return { status: 'failed', summary: String(e), truncated: false, metadata: [] };
    }
  },
};
