// dependency-cruiser configuration: `npm test` (scripts/test.mjs) fails on any import cycle
// among the TypeScript sources under packages/*/src, type-only imports included.
// Run it alone with `npx depcruise --config .dependency-cruiser.cjs packages`.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module must not import itself back through other modules (type-only imports count too).',
      from: { path: '^packages/[^/]+/src/' },
      to: { circular: true },
    },
  ],
  options: {
    // Only the sources: another package is reached through its built `dist`, which is not followed.
    includeOnly: '^packages/[^/]+/src/',
    doNotFollow: { path: 'node_modules' },
    // `import type` and type-only specifiers are dependencies too.
    tsPreCompilationDeps: true,
    moduleSystems: ['es6', 'cjs'],
  },
};
