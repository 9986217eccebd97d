// Runs an exported bundle's gate with its cross-encoder over cases, as its relevance check does: reads a
// JSON array of {id, question, passages, queryVector} from argv[3], prints {id: {score, keep, passages}}
// (passages: each top-set passage's best window logit, null for an empty one) as JSON.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const bundle = process.argv[2];
const gate = await import(pathToFileURL(`${bundle}/gate.ts`).href);
const ce = await import(pathToFileURL(`${bundle}/cross_encoder.ts`).href);
const cases = JSON.parse(readFileSync(process.argv[3], "utf8"));
const model = gate.GATE_CROSS_ENCODER ? await ce.CrossEncoder.load(gate.GATE_CROSS_ENCODER, bundle) : null;
const out = {};
for (const c of cases) {
  const passages = model ? await model.score(c.question, gate.gateTopSet(c.passages)) : [];
  const features = model ? ce.ceFeatures(passages) : undefined;
  out[c.id] = {
    score: gate.gateScore(c.question, c.passages, c.queryVector, features),
    keep: gate.gateKeep(c.question, c.passages, c.queryVector, features),
    passages: passages.map((s) => (Number.isNaN(s) ? null : s)),
  };
}
process.stdout.write(JSON.stringify(out));
