// A node:test reporter for scripts/test-repeat.mjs: one JSON line per finished test,
// `{"file":…,"name":…,"nesting":…,"pass":true|false}`, so results can be counted per file.
export default async function* fileReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    if (d.details?.type === 'suite' && event.type === 'test:pass') continue;
    yield (
      JSON.stringify({ file: d.file ?? d.name, name: d.name, nesting: d.nesting, pass: event.type === 'test:pass' }) +
      '\n'
    );
  }
}
