// Drives a bundle's RelevanceGateService the way the reference's pipeline calls its relevance judge: read
// the `rag.relevanceCheck` setting per case, keep the passages at or above the floor (the pipeline's
// chunks, best first, at most top k), and judge them only when the check is on and any survived, with the
// whole reranked pool as RetrievalStages.candidates. argv: bundle folder, cases JSON ({id, question,
// passages, setting}), options JSON ({floor, topK, modelDir?}). Prints {cases: {id: verdict|null}, stats,
// line, warnings}.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [bundle, casesPath, optionsJson] = process.argv.slice(2);
const { RelevanceGateService, isRelevanceCheckEnabled } = await import(pathToFileURL(`${bundle}/relevance_check.ts`).href);
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
const options = JSON.parse(optionsJson);
const warnings = [];
const service = new RelevanceGateService({ modelDir: options.modelDir, log: (m) => warnings.push(m) });
const out = {};
for (const c of cases) {
  const chunks = c.passages.filter((p) => p.score >= options.floor).slice(0, options.topK);
  if (!isRelevanceCheckEnabled(c.setting) || !chunks.length) {
    out[c.id] = null;
    continue;
  }
  const v = await service.judge(c.question, chunks, c.passages);
  out[c.id] = { kept: v.kept.length, rejected: v.rejected, judged: v.judged, verdict: v.verdict, reason: v.reason };
}
process.stdout.write(JSON.stringify({ cases: out, stats: service.stats, line: service.line(), warnings }));
