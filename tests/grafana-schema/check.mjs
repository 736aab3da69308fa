// node check.mjs WORKDIR DASHBOARD.json...: type-checks each dashboard against DashboardJson
// (dashboard.ts) with the TypeScript compiler; prints one line per error, exits 1 on any.
// WORKDIR holds node_modules (@grafana/schema, typescript: package.json here, pinned).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const [workdir, ...files] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(workdir), 'package.json'));
const ts = require('typescript');
const here = path.dirname(fileURLToPath(import.meta.url));
fs.copyFileSync(path.join(here, 'dashboard.ts'), path.join(workdir, 'dashboard.ts'));
const roots = [];
for (const file of files) {
  const dashboard = JSON.parse(fs.readFileSync(file, 'utf8'));
  // __requires is the export's list of plugins for the import dialog, not part of the dashboard.
  delete dashboard.__requires;
  const out = path.join(workdir, path.basename(file, '.json') + '.dashboard.ts');
  fs.writeFileSync(out, "import type { DashboardJson } from './dashboard';\n" +
    'export const dashboard: DashboardJson = ' + JSON.stringify(dashboard, null, 1) + ';\n');
  roots.push(out);
}
const program = ts.createProgram(roots, {
  noEmit: true, strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [],
});
const diagnostics = ts.getPreEmitDiagnostics(program);
for (const d of diagnostics) {
  let where = '';
  if (d.file) {  // the file and line, and the line itself (it names the JSON key)
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    const text = d.file.text.split('\n')[line].trim();
    where = `${path.basename(d.file.fileName, '.dashboard.ts')}.json: ${text}: `;
  }
  console.log(where + ts.flattenDiagnosticMessageText(d.messageText, ' '));
}
console.log(`${files.length} dashboard(s), ${diagnostics.length} error(s) against @grafana/schema ${require('@grafana/schema/package.json').version}`);
process.exit(diagnostics.length ? 1 : 0);
