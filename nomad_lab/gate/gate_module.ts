// A nomad-lab learned gate for the reference server, written by `nomad-lab gate export GATE --to ts`.
// Self-contained: the gate's numbers and every table its features read are the GATE constant below; the
// feature code mirrors nomad_lab/gate/runtime.py (tests hold both to `nomad-lab gate apply` within 1e-9).
// Locked to the embedder and corpus in GATE.embedder and GATE.corpusFingerprint: scores from another
// embedder live on another scale. Re-export after refitting; do not edit the numbers by hand.
//
// Call gateKeep(question, passages) with the WHOLE reranked pool (pre-floor, best first): every passage
// goes into the prompt when it returns true, none when false. A passage is the server's candidate:
// score (final), semanticScore (raw cosine), text, source (document_id || source), scores (named).
// A gate reading a model (GATE.crossEncoder) takes that model's features as modelFeatures: the bundle's
// relevance_check.ts computes them (cross_encoder.ts) over gateTopSet(passages) and passes them in.

export interface GatePassage {
  text?: string;
  score: number;
  semanticScore?: number;
  source?: string | null;
  scores?: Record<string, number>;
}

interface GateData {
  format: string;
  kinds: string[];
  features: string[];
  mean: number[];
  scale: number[];
  coef: number[];
  intercept: number;
  threshold: number;
  embedder: Record<string, unknown> | null;
  corpusFingerprint: string | null;
  trainingRun: string | null;
  floor: number;
  topK: number;
  diversityPenalty: number;
  stopwords: string[];
  expansions: Record<string, string>;
  coverageNames: string[];
  functionWords: string[];
  vocabulary: { documents: number; frequencies: Record<string, number> } | null;
  crossEncoder?: Record<string, unknown> | null;
}

const GATE: GateData = __GATE__;

const TOP_SCORES = 10;
const SCORE_TOP = 5;
const STOP = new Set(GATE.stopwords);
const EXPANSIONS = new Map(Object.entries(GATE.expansions));
const FREQUENCIES = new Map(Object.entries(GATE.vocabulary ? GATE.vocabulary.frequencies : {}));
const WANTED = new Set(GATE.features);
const FUNCTION_WORDS = new Set(GATE.functionWords);

export const GATE_THRESHOLD: number = GATE.threshold;
export const GATE_EMBEDDER: Record<string, unknown> | null = GATE.embedder;
export const GATE_CORPUS_FINGERPRINT: string | null = GATE.corpusFingerprint;
export const GATE_CROSS_ENCODER: Record<string, unknown> | null = GATE.crossEncoder ?? null;

function preprocessQuery(query: string): string {
  let processed = query.trim();
  const expansions: string[] = [];
  for (const word of processed.toLowerCase().split(/\s+/)) {
    const expansion = word ? EXPANSIONS.get(word.replace(/[^A-Za-z0-9_]/g, "")) : undefined;
    if (expansion) expansions.push(expansion);
  }
  if (expansions.length) processed = `${processed} ${expansions.join(" ")}`;
  return processed;
}

function extractKeywords(text: string): string[] {
  const keywords = new Set<string>();
  for (const token of text.split(" ")) {
    if (STOP.has(token.toLowerCase())) continue;
    const word = token.replace(/[^A-Za-z0-9_]/g, "").toLowerCase();
    if (word.length > 2) keywords.add(word);
  }
  return [...keywords];
}

function keywordOverlap(query: string, texts: string[]): number {
  const keywords = new Set(extractKeywords(preprocessQuery(query)));
  if (!keywords.size) return 0;
  const text = texts.join(" ").toLowerCase();
  let found = 0;
  for (const word of keywords) if (text.includes(word)) found += 1;
  return found / keywords.size;
}

function stem(word: string): string {
  word = word.split("'")[0];
  for (const suffix of ["ies", "es", "s", "ing", "ed"]) {
    if (word.length > suffix.length + 3 && word.endsWith(suffix)) {
      return word.slice(0, -suffix.length) + (suffix === "ies" ? "y" : "");
    }
  }
  return word;
}

function terms(text: string): string[] {
  const words = text.toLowerCase().replaceAll("\u2019", "'").match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? [];
  return words.filter((w) => w.length > 1 && !STOP.has(w)).map(stem);
}

function idf(term: string): number {
  const documents = GATE.vocabulary ? GATE.vocabulary.documents : 0;
  const df = FREQUENCIES.get(term) ?? 0;
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
}

// Entity-like terms of a question, as nomad_lab/data/kind_check.py's entity_terms cuts them: quoted
// phrases, runs of capitalized words, tokens holding a digit or a code identifier.
const QUOTED = /(?:^|(?<=\s))["“‘']([^"”’']{2,60})["”’'](?=[\s?.!,;:]|$)/g;
const WORD = /[A-Za-z0-9][A-Za-z0-9'’.-]*[A-Za-z0-9]|[A-Za-z0-9]/g;
const CODE = /[a-z]\.[a-z]|_/i;
const QUANTITY = /^[\d,.]+-?[a-z]+$/;

function entityTerms(question: string): string[] {
  const found = [...question.matchAll(QUOTED)].map((m) => m[1].trim());
  const words = [...question.matchAll(WORD)].map((m) => m[0]);
  let run: string[] = [];
  words.forEach((raw, i) => {
    const word = raw.replace(/['’]s$/, "").replace(/\.+$/, "");
    const capital = /^[A-Z]/.test(word) && !FUNCTION_WORDS.has(raw.toLowerCase());
    const firstAlone = i === 0 && !(words.length > 1 && /^[A-Z]/.test(words[1]));
    let coded = (/[0-9]/.test(word) && /[A-Za-z]/.test(word)) || CODE.test(word);
    coded = coded && !QUANTITY.test(word);
    if (capital && !firstAlone && !CODE.test(word)) {
      run.push(word);
    } else if (coded) {
      if (run.length) found.push(run.join(" "));
      found.push(word);
      run = [];
    } else if (run.length) {
      found.push(run.join(" "));
      run = [];
    }
    if (run.length && word !== raw.replace(/\.+$/, "")) {
      found.push(run.join(" "));
      run = [];
    }
  });
  if (run.length) found.push(run.join(" "));
  return [...new Set(found.filter((t) => t))];
}

function coverage(query: string, texts: string[]): number[] {
  const asked = [...new Set(terms(query))];
  if (!asked.length) return GATE.coverageNames.map(() => 0);
  const present = new Set(texts.flatMap(terms));
  const weights = new Map(asked.map((t) => [t, idf(t)] as [string, number]));
  const missing = asked.filter((t) => !present.has(t));
  const unseen = asked.filter((t) => (FREQUENCIES.get(t) ?? 0) === 0);
  let total = 0;
  for (const t of asked) total += weights.get(t)!;
  let missingWeight = 0;
  let missingMax = 0;
  for (const t of missing) {
    missingWeight += weights.get(t)!;
    missingMax = Math.max(missingMax, weights.get(t)!);
  }
  const entities = entityTerms(query).map(terms).filter((e) => e.length);
  const unseenEntities = entities.filter((e) => e.some((t) => (FREQUENCIES.get(t) ?? 0) === 0)).length;
  let entityMissing = 0;
  for (const e of entities) for (const t of e) if (!present.has(t)) entityMissing = Math.max(entityMissing, idf(t));
  return [
    total > 0 ? missingWeight / total : 0,
    missingMax,
    unseen.length / asked.length,
    unseen.length,
    asked.length,
    entities.length ? unseenEntities / entities.length : 0,
    entityMissing,
  ];
}

function sortedTop(values: number[], k: number): number[] {
  const ordered = [...values].sort((a, b) => b - a).slice(0, k);
  while (ordered.length < k) ordered.push(0);
  return ordered;
}

export function gateTopSet(passages: GatePassage[]): string[] {
  // retrieval at floor 0: source diversity (a repeat of a source is penalized), re-sorted, the top k
  const seen = new Map<string, number>();
  const penalized = passages.map((p) => {
    const key = p.source || "unknown";
    const count = seen.get(key) ?? 0;
    seen.set(key, count + 1);
    return { text: p.text ?? "", score: count ? p.score * Math.pow(GATE.diversityPenalty, count) : p.score };
  });
  penalized.sort((a, b) => b.score - a.score);
  return penalized.slice(0, GATE.topK).map((p) => p.text);
}

export function gateFeatures(
  question: string,
  passages: GatePassage[],
  queryVector?: number[],
  modelFeatures?: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  const scores = passages.map((p) => p.score);
  const final = sortedTop(scores, TOP_SCORES);
  const semantic = sortedTop(passages.map((p) => p.semanticScore ?? p.score), TOP_SCORES);
  final.forEach((v, i) => (out[`final_${i + 1}`] = v));
  semantic.forEach((v, i) => (out[`semantic_${i + 1}`] = v));
  const top = final.slice(0, GATE.topK);
  let sum = 0;
  for (const v of top) sum += v;
  const mean = sum / top.length;
  let squares = 0;
  for (const v of top) squares += (v - mean) * (v - mean);
  const std = Math.sqrt(squares / top.length);
  let poolSum = 0;
  for (const v of scores) poolSum += v;
  const poolMean = scores.length ? poolSum / scores.length : 0;
  out.gap_1_2 = final[0] - final[1];
  out[`mean_top${GATE.topK}`] = mean;
  out[`std_top${GATE.topK}`] = std;
  out.nqc = Math.abs(mean) > 1e-9 ? std / Math.abs(mean) : 0;
  out.wig = mean - poolMean;
  out.above_floor = scores.filter((s) => s >= GATE.floor).length;
  out.pool_size = scores.length;
  if (WANTED.has("keyword_overlap") || GATE.vocabulary) {
    const texts = gateTopSet(passages);
    out.keyword_overlap = keywordOverlap(question, texts);
    if (GATE.vocabulary) {
      const values = coverage(question, texts);
      if (values.length !== GATE.coverageNames.length) throw new Error("gate: coverage features out of date");
      values.forEach((v, i) => (out[GATE.coverageNames[i]] = v));
    }
  }
  const named = new Set(GATE.features.filter((f) => f.startsWith("score_")).map((f) => f.slice(6, f.lastIndexOf("_"))));
  for (const name of named) {
    const values = passages.map((p) => {
      const value = p.scores?.[name];
      if (typeof value !== "number") throw new Error(`gate: every passage needs scores.${name}`);
      return value;
    });
    sortedTop(values, SCORE_TOP).forEach((v, i) => (out[`score_${name}_${i + 1}`] = v));
  }
  if (GATE.features.some((f) => /^query_\d+$/.test(f))) {
    if (!queryVector) throw new Error("gate: this gate reads the query embedding: pass queryVector");
    queryVector.forEach((v, i) => (out[`query_${i}`] = v));
  }
  if (modelFeatures) Object.assign(out, modelFeatures);
  for (const name of GATE.features) {
    if (typeof out[name] !== "number" || Number.isNaN(out[name])) throw new Error(`gate: no value for feature ${name}`);
  }
  return out;
}

export function gateScore(
  question: string,
  passages: GatePassage[],
  queryVector?: number[],
  modelFeatures?: Record<string, number>,
): number {
  const x = gateFeatures(question, passages, queryVector, modelFeatures);
  let logit = GATE.intercept;
  GATE.features.forEach((name, i) => {
    logit += ((x[name] - GATE.mean[i]) / GATE.scale[i]) * GATE.coef[i];
  });
  return 1 / (1 + Math.exp(-Math.min(500, Math.max(-500, logit))));
}

export function gateKeep(
  question: string,
  passages: GatePassage[],
  queryVector?: number[],
  modelFeatures?: Record<string, number>,
): boolean {
  return gateScore(question, passages, queryVector, modelFeatures) >= GATE.threshold;
}
