// The Node half of benchmarks/sufficiency_bundle.py: times the bundle's sufficiency check deciding each
// question (units, the body over each, the head, the threshold), one question at a time after one warm-up
// question. argv: bundle folder, cases JSON ({id, question, passages}). Prints {id: {score, keep, ms}}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, casesPath] = process.argv.slice(2);
const { SufficiencyCheckService } = await import(pathToFileURL(`${bundle}/sufficiency_check.ts`).href);
const { SUFFICIENCY } = await import(pathToFileURL(`${bundle}/sufficiency.ts`).href);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const service = new SufficiencyCheckService();
await service.score(cases[0].question, cases[0].passages); // loads the model, warms the session
const out = {};
for (const c of cases) {
  const started = performance.now();
  const score = await service.score(c.question, c.passages);
  const ms = performance.now() - started;
  out[c.id] = { score: Number.isNaN(score) ? null : score, keep: score >= SUFFICIENCY.threshold, ms };
}
process.stdout.write(JSON.stringify(out));
