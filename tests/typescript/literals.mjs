// The literals of TypeScript sources, read by the TypeScript compiler's own parser:
// node literals.mjs FILE... prints [[file, line, kind, value], ...] as JSON. Jinja tags in a
// template (.j2) are blanked first, so only its hand-written text is read.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const ts = createRequire(import.meta.url)("typescript");
const out = [];
for (const file of process.argv.slice(2)) {
  let text = readFileSync(file, "utf8");
  if (file.endsWith(".j2")) {
    text = text.replace(/\{\{[\s\S]*?\}\}/g, "null").replace(/\{%[\s\S]*?%\}/g, "");
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    const line = () => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      out.push([file, line(), "string", node.text]);
    } else if (ts.isTemplateExpression(node)) {
      out.push([file, line(), "string", node.head.text]);
      for (const span of node.templateSpans) out.push([file, line(), "string", span.literal.text]);
    } else if (ts.isNumericLiteral(node)) {
      out.push([file, line(), "number", Number(node.text)]);
    } else if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      out.push([file, line(), "string", node.text.slice(1, node.text.lastIndexOf("/"))]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
process.stdout.write(JSON.stringify(out));
