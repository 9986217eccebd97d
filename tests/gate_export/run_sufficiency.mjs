// Runs a sufficiency bundle's check over cases as the assistant calls it: reads a JSON array of
// {id, question, passages} (passages: the chunks that go into the prompt, {text}) from argv[3] and
// options JSON from argv[4] ({modelDir?}); prints {cases: {id: {score, stated, kept, note, judged,
// reason, units}}, stats, warnings} (score null for NaN or none).
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, casesPath, optionsJson] = process.argv.slice(2);
const { SufficiencyCheckService } = await import(pathToFileURL(`${bundle}/sufficiency_check.ts`).href);
const { UnitText } = await import(pathToFileURL(`${bundle}/sufficiency_units.ts`).href);
const { SUFFICIENCY } = await import(pathToFileURL(`${bundle}/sufficiency.ts`).href);
const options = JSON.parse(optionsJson ?? "{}");
const warnings = [];
const service = new SufficiencyCheckService({ modelDir: options.modelDir, log: (m) => warnings.push(m) });
const text = new UnitText(SUFFICIENCY.text);
const out = {};
for (const c of JSON.parse(readFileSync(casesPath, "utf8"))) {
  const v = await service.check(c.question, c.passages);
  let units = null;
  try {
    units = text.questionUnits(c.question, c.passages.map((p) => p.text), SUFFICIENCY.units, SUFFICIENCY.unitWords);
  } catch {}
  const score = v.score === null || Number.isNaN(v.score) ? null : v.score;
  out[c.id] = { score, stated: v.stated, kept: v.kept.length, note: v.note, judged: v.judged, reason: v.reason, units };
}
process.stdout.write(JSON.stringify({ cases: out, stats: service.stats, warnings }));
