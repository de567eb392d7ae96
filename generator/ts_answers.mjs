// A rendered TypeScript package's answers to vector cases, for the mutation report
// (generator/language_mutations.py): node ts_answers.mjs PACKAGE < cases.json > answers.json.
// Each source file is transpiled alone (typescript's transpileModule: no type check, a few
// milliseconds a file), so a mutated package is judged in a second, not a tsc run.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";

const ts = createRequire(import.meta.url)("typescript");
const [pkg] = process.argv.slice(2);
const src = join(pkg, "src");
const out = join(pkg, "transpiled");

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
for (const file of walk(src).filter((f) => f.endsWith(".ts"))) {
  const target = join(out, relative(src, file)).replace(/\.ts$/, ".js");
  const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, outputText);
}

const { runCase } = await import(pathToFileURL(join(out, "vectors.js")).href);
const cases = JSON.parse(readFileSync(0, "utf8"));
const answers = cases.map((c) => {
  try {
    return runCase(c);
  } catch (e) {
    return { exception: String(e) };
  }
});
process.stdout.write(JSON.stringify(answers));
