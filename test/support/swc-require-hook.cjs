// Lets a plain Node process require TypeScript sources, compiled by the same swc settings as jest.config.js.
// Used by test/support/typescript-process.ts for code that cannot run inside Jest's module sandbox.
const { transformFileSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformFileSync(filename, {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
