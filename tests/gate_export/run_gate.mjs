// Runs an exported gate module (a .ts file, types stripped by Node) over cases: reads a JSON array of
// {id, question, passages, queryVector} from argv[3], prints {id: {score, keep}} as JSON.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const gate = await import(pathToFileURL(process.argv[2]).href);
const cases = JSON.parse(readFileSync(process.argv[3], "utf8"));
const out = {};
for (const c of cases) {
  out[c.id] = {
    score: gate.gateScore(c.question, c.passages, c.queryVector),
    keep: gate.gateKeep(c.question, c.passages, c.queryVector),
  };
}
process.stdout.write(JSON.stringify(out));
