// start.mjs FIXTURES.json: serve the fixtures with @copilotkit/aimock (an
// independent fake of the OpenAI and Anthropic APIs) on a free loopback
// port. The first stdout line is the base URL; the server stops when
// stdin closes or on SIGTERM, so a test that started it never leaks it.
import { readFileSync } from "node:fs";
import { LLMock } from "@copilotkit/aimock";

const file = process.argv[2];
if (!file) {
  console.error("usage: node start.mjs FIXTURES.json");
  process.exit(2);
}
const { fixtures, capped = [] } = JSON.parse(readFileSync(file, "utf8"));
const mock = new LLMock({ host: "127.0.0.1", port: 0, logLevel: "warn" });
mock.addFixturesFromJSON(fixtures);
// A turn cut at the output cap can end inside a tool call's arguments,
// which the file loader's validation refuses as JSON; these go in through
// on(), which serves the arguments as written.
for (const { match, response } of capped) mock.on(match, response);
await mock.start();
process.stdout.write(mock.url + "\n");

const stop = async () => {
  await mock.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
