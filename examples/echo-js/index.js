// The echo tool in JavaScript: returns its input unchanged. Built with
// componentize-js against the same world as examples/echo-go, and checked
// against the same golden import/export list.

export const run = {
  run(input) {
    if (input.data === undefined) {
      return { status: 'failed', summary: 'echo needs input data', truncated: false, metadata: [] };
    }
    return { status: 'passed', data: input.data, truncated: false, metadata: [] };
  },
};
