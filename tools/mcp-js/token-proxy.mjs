// token-proxy.mjs TARGET_URL TOKEN: listens on a free 127.0.0.1 port,
// prints its URL, and forwards every request to TARGET_URL's host with
// "Authorization: Bearer TOKEN" added. The conformance suite's client
// takes no headers; this lets it reach mur mcp --http, whose every
// request needs the session's token. Host, method, path, body and the
// streamed response pass through unchanged.
import http from "node:http";

const [target, token] = process.argv.slice(2);
const up = new URL(target);
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const fwd = http.request(
    { host: up.hostname, port: up.port, method: req.method, path: req.url, headers },
    (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    },
  );
  fwd.on("error", (e) => {
    res.writeHead(502);
    res.end(String(e));
  });
  req.pipe(fwd);
});
server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}${up.pathname}`);
});
