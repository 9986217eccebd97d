// A nomad-lab sufficiency check for the reference server: does a passage that reaches the prompt state the
// answer? When not, keep the passages with the prompt note, or drop them, as the export's action says
// (part of the bundle `nomad-lab gate export sufficiency:... --to ts --bundle DIR` writes; do not edit).
//
// The score is nomad_lab/gate/unit_reader.py's: the units chosen lexically (sufficiency_units.ts), each
// (question, unit) pair read alone by the ms-marco body (cross_encoder.ts runs model/body.onnx, the model
// with its last layer's keys, values and [CLS] input as outputs, cut only_second at maxTokens), the keys
// and values rounded to half precision, the fine-tuned head (model/head.json) in double precision, the
// answer-type shift, the best unit against the threshold. Like the relevance gate it never throws: any
// error (a missing model file, a malformed passage) keeps the chunks without a note, counted in `stats`.

import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CrossEncoder } from "./cross_encoder.ts";
import type { CrossEncoderSpec } from "./cross_encoder.ts";
import { halfRound } from "./half_precision.ts";
import { UnitText } from "./sufficiency_units.ts";
import { SUFFICIENCY } from "./sufficiency.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

export interface SufficiencyVerdict<T> {
  kept: T[];
  note: string | null; // the prompt note to put after the passages (the note action on a "no")
  stated: boolean | null; // null: not checked (failed open, or nothing to check)
  judged: boolean;
  reason: string | null;
  ms: number;
  score: number | null;
}

interface Tensor {
  name: string;
  shape: number[];
  dtype: "int8" | "float32";
  scale?: number;
  data: string;
}

// The head's weights as float32 values held in doubles (an INT8 tensor times its scale, rounded to float32).
function headWeights(tensors: Tensor[]): Map<string, Float64Array> {
  const out = new Map<string, Float64Array>();
  for (const t of tensors) {
    const raw = Buffer.from(t.data, "base64");
    const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
    const values = t.dtype === "int8" ? new Int8Array(buffer) : new Float32Array(buffer);
    out.set(t.name, Float64Array.from(values, (v) => (t.dtype === "int8" ? Math.fround(v * t.scale!) : v)));
  }
  return out;
}

// erf to double precision: its Taylor series below 2.5, the continued fraction of erfc above.
export function erf(x: number): number {
  const a = Math.abs(x);
  let r: number;
  if (a < 2.5) {
    const x2 = a * a;
    let term = a;
    let sum = a;
    for (let n = 1; n < 200 && Math.abs(term) > 1e-18 * Math.abs(sum); n++) {
      term *= -x2 / n;
      sum += term / (2 * n + 1);
    }
    r = (2 / Math.sqrt(Math.PI)) * sum;
  } else if (a < 6) {
    let t = a;
    for (let k = 120; k >= 1; k--) t = a + k / 2 / t;
    r = 1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / t;
  } else r = 1;
  return x < 0 ? -r : r;
}

function affine(w: Float64Array, b: Float64Array, x: ArrayLike<number>): Float64Array {
  const n = b.length;
  const m = x.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < m; j++) s += w[i * m + j] * x[j];
    out[i] = s + b[i];
  }
  return out;
}

function layerNorm(x: Float64Array, w: Float64Array, b: Float64Array): Float64Array {
  let mean = 0;
  for (const v of x) mean += v;
  mean /= x.length;
  let variance = 0;
  for (const v of x) variance += (v - mean) * (v - mean);
  const scale = Math.sqrt(variance / x.length + 1e-12);
  return x.map((v, i) => ((v - mean) / scale) * w[i] + b[i]);
}

// The head's logit for one reading (keys and values tokens x d, row-major; h the [CLS] input), as head_logit.
export function headLogit(w: Map<string, Float64Array>, heads: number, k: Float64Array, v: Float64Array, h: Float64Array): number {
  const g = (name: string): Float64Array => w.get(name)!;
  const d = h.length;
  const size = d / heads;
  const tokens = k.length / d;
  const q = affine(g("q.weight"), g("q.bias"), h);
  const context = new Float64Array(d);
  for (let head = 0; head < heads; head++) {
    const att = new Float64Array(tokens);
    let top = -Infinity;
    for (let t = 0; t < tokens; t++) {
      let s = 0;
      for (let j = 0; j < size; j++) s += q[head * size + j] * k[t * d + head * size + j];
      att[t] = s / Math.sqrt(size);
      top = Math.max(top, att[t]);
    }
    let sum = 0;
    for (let t = 0; t < tokens; t++) sum += att[t] = Math.exp(att[t] - top);
    for (let j = 0; j < size; j++) {
      let s = 0;
      for (let t = 0; t < tokens; t++) s += (att[t] / sum) * v[t * d + head * size + j];
      context[head * size + j] = s;
    }
  }
  const o = affine(g("o.weight"), g("o.bias"), context).map((x, i) => x + h[i]);
  const a = layerNorm(o, g("ln1.weight"), g("ln1.bias"));
  const inner = affine(g("i.weight"), g("i.bias"), a).map((x) => 0.5 * x * (1 + erf(x / Math.SQRT2)));
  const f = layerNorm(affine(g("out.weight"), g("out.bias"), inner).map((x, i) => x + a[i]), g("ln2.weight"), g("ln2.bias"));
  const pooled = affine(g("pool.weight"), g("pool.bias"), f).map(Math.tanh);
  return affine(g("cls.weight"), g("cls.bias"), pooled)[0];
}

const toHalf = (values: Float32Array): Float64Array => Float64Array.from(values, halfRound);

export interface SufficiencyOptions {
  modelDir?: string; // where body.onnx, tokenizer.json and head.json are (default: the bundle's model/)
  threads?: number;
  log?: (message: string) => void;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0].trim() || "error";
}

function passageText(p: unknown, i: number): string {
  const text = typeof p === "string" ? p : typeof p === "object" && p !== null ? (p as { text?: unknown }).text : undefined;
  if (typeof text !== "string") throw new Error(`malformed passage ${i + 1}: no text`);
  return text;
}

export class SufficiencyCheckService {
  readonly stats = { calls: 0, failures: 0, stated: 0, noted: 0, dropped: 0, totalMs: 0, reasons: {} as Record<string, number> };
  private readonly options: SufficiencyOptions;
  private readonly text = new UnitText(SUFFICIENCY.text);
  private loaded: Promise<{ body: CrossEncoder; head: Map<string, Float64Array> | null }> | null = null;

  constructor(options: SufficiencyOptions = {}) {
    this.options = options;
  }

  private model(): Promise<{ body: CrossEncoder; head: Map<string, Float64Array> | null }> {
    if (!this.loaded) {
      const b = SUFFICIENCY.body;
      const dir = this.options.modelDir ?? (isAbsolute(b.modelDir) ? b.modelDir : join(HERE, b.modelDir));
      const spec: CrossEncoderSpec = { name: "ms-marco body", digest: b.digest, modelKey: "", window: 0, stride: 0, maxTokens: b.maxTokens, model: b.model, tokenizer: b.tokenizer, modelDir: dir };
      this.loaded = (async () => {
        const head = SUFFICIENCY.head ? headWeights(JSON.parse(readFileSync(join(dir, SUFFICIENCY.head), "utf8")).tensors) : null;
        return { body: await CrossEncoder.load(spec, HERE, this.options.threads ?? 2), head };
      })();
      this.loaded.catch(() => (this.loaded = null)); // a missing file fails this call; a later one retries
    }
    return this.loaded;
  }

  // The best unit's score (NaN: no unit); throws on any error (check() is the call that never does).
  async score(question: string, passages: unknown[]): Promise<number> {
    if (!Array.isArray(passages)) throw new Error("malformed passages: not an array");
    const texts = passages.map(passageText);
    const units = this.text.questionUnits(question, texts, SUFFICIENCY.units, SUFFICIENCY.unitWords);
    if (!units.length) return NaN;
    const { body, head } = await this.model();
    const [kName, vName, hName] = SUFFICIENCY.body.outputs;
    const shift = this.text.typeShift(question, units);
    let best = -Infinity;
    for (let i = 0; i < units.length; i++) {
      const out = await body.runPair(question, units[i], true);
      let logit = (out.logits.data as Float32Array)[0];
      if (head) {
        const h = Float64Array.from((out[hName].data as Float32Array).subarray(0, out[hName].dims[2]));
        logit = headLogit(head, SUFFICIENCY.body.heads!, toHalf(out[kName].data as Float32Array), toHalf(out[vName].data as Float32Array), h);
      }
      best = Math.max(best, logit + SUFFICIENCY.typeWeight * shift[i]);
    }
    return best;
  }

  // The assistant's second decision for the chunks about to go into the prompt.
  async check<T>(question: string, chunks: T[]): Promise<SufficiencyVerdict<T>> {
    const all = [...(chunks ?? [])];
    const started = performance.now();
    let result: SufficiencyVerdict<T>;
    try {
      if (!all.length) return { kept: all, note: null, stated: null, judged: false, reason: "no-chunks", ms: 0, score: null };
      const score = await this.score(question, all);
      const stated = !Number.isNaN(score) && score >= SUFFICIENCY.threshold;
      const note = !stated && SUFFICIENCY.action === "note" ? SUFFICIENCY.note : null;
      result = { kept: stated || note ? all : [], note, stated, judged: true, reason: null, ms: 0, score };
    } catch (error) {
      const reason = firstLine(error);
      (this.options.log ?? console.warn)(`sufficiency check failed open: ${reason}`);
      result = { kept: all, note: null, stated: null, judged: false, reason, ms: 0, score: null };
    }
    result.ms = performance.now() - started;
    const s = this.stats;
    s.calls += 1;
    s.totalMs += result.ms;
    if (!result.judged) {
      s.failures += 1;
      s.reasons[result.reason ?? "unknown"] = (s.reasons[result.reason ?? "unknown"] ?? 0) + 1;
    } else if (result.stated) s.stated += 1;
    else if (result.note) s.noted += 1;
    else s.dropped += 1;
    return result;
  }
}
