// The Node half of benchmarks/gate_bundle.py: times the bundle's relevance check deciding each question
// (its cross-encoder on the top set, then the gate), one question at a time after one warm-up question.
// argv: bundle folder, cases JSON ({id, question, passages}). Prints {id: {score, keep, ms}} as JSON.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, casesPath] = process.argv.slice(2);
const { RelevanceGateService } = await import(pathToFileURL(`${bundle}/relevance_check.ts`).href);
const { GATE_THRESHOLD } = await import(pathToFileURL(`${bundle}/gate.ts`).href);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const service = new RelevanceGateService();
await service.score(cases[0].question, cases[0].passages); // loads the model, warms the session
const out = {};
for (const c of cases) {
  const started = performance.now();
  const score = await service.score(c.question, c.passages);
  out[c.id] = { score, keep: score >= GATE_THRESHOLD, ms: performance.now() - started };
}
process.stdout.write(JSON.stringify(out));
