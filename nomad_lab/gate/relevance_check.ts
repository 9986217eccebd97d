// A drop-in for the reference server's relevance judge: the same call, the same result and the same
// setting, with a fitted nomad-lab gate (and its cross-encoder, when it reads one) deciding instead of a
// chat model (part of the bundle `nomad-lab gate export GATE --to ts --bundle DIR` writes).
//
// Like the judge it decides all-or-nothing for the passages that survived the floor, never throws and
// fails open: any error (a missing model file, a malformed passage, a feature it cannot compute) keeps
// every chunk, is counted in `stats.failures` and is logged as a warning. Pass the WHOLE reranked pool
// (RetrievalStages.candidates: pre-floor, best first) as `pool` when you have it: the gate's pool
// statistics were fitted on it; without it the surviving chunks stand in for the pool.

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { GATE_CROSS_ENCODER, gateScore, gateTopSet, GATE_THRESHOLD } from "./gate.ts";
import type { GatePassage } from "./gate.ts";
import { CrossEncoder, ceFeatures } from "./cross_encoder.ts";
import type { CrossEncoderSpec } from "./cross_encoder.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

// The reference's rule for `rag.relevanceCheck`: on only for boolean true or the string "true".
export function isRelevanceCheckEnabled(raw: unknown): boolean {
  return raw === true || raw === "true";
}

export interface GateVerdict<T> {
  kept: T[];
  rejected: number;
  judged: boolean;
  verdict: boolean | null;
  reason: string | null;
  ms: number;
  score: number | null;
}

export interface GateStats {
  model: string;
  calls: number;
  failures: number;
  rejected: number;
  totalMs: number;
  maxMs: number;
  reasons: Record<string, number>;
}

export interface RelevanceGateOptions {
  modelDir?: string; // where model.onnx and tokenizer.json are (default: the exported place)
  threads?: number; // onnxruntime intra-op threads (default 2, as nomad-lab scores)
  log?: (message: string) => void; // where a fail-open warning goes (default console.warn)
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n")[0].trim() || "error";
}

// A passage the gate cannot read is an error naming it (judge() then fails open), never a silent NaN.
function checkPassages(pool: GatePassage[]): void {
  if (!Array.isArray(pool)) throw new Error("malformed pool: not an array of passages");
  pool.forEach((p, i) => {
    if (typeof p !== "object" || p === null) throw new Error(`malformed passage ${i + 1}: not an object`);
    if (typeof p.score !== "number" || !Number.isFinite(p.score)) {
      throw new Error(`malformed passage ${i + 1}: score ${JSON.stringify(p.score)} is not a number`);
    }
    if (p.text !== undefined && typeof p.text !== "string") throw new Error(`malformed passage ${i + 1}: text is not a string`);
  });
}

export class RelevanceGateService {
  readonly stats: GateStats;
  private readonly options: RelevanceGateOptions;
  private model: Promise<CrossEncoder> | null = null;

  constructor(options: RelevanceGateOptions = {}) {
    this.options = options;
    const ce = GATE_CROSS_ENCODER as CrossEncoderSpec | null;
    this.stats = { model: ce ? `nomad-lab gate + ${ce.name}` : "nomad-lab gate", calls: 0, failures: 0, rejected: 0, totalMs: 0, maxMs: 0, reasons: {} };
  }

  private crossEncoder(): Promise<CrossEncoder> {
    if (!this.model) {
      const spec = { ...(GATE_CROSS_ENCODER as unknown as CrossEncoderSpec) };
      if (this.options.modelDir) spec.modelDir = this.options.modelDir;
      this.model = CrossEncoder.load(spec, HERE, this.options.threads ?? 2);
    }
    return this.model;
  }

  // P(on topic) for a question and its whole pool (throws on any error: judge() is the call that never does).
  async score(question: string, pool: GatePassage[], queryVector?: number[]): Promise<number> {
    checkPassages(pool);
    let model: Record<string, number> | undefined;
    if (GATE_CROSS_ENCODER) {
      const scorer = await this.crossEncoder();
      model = ceFeatures(await scorer.score(question, gateTopSet(pool).slice()));
    }
    return gateScore(question, pool, queryVector, model);
  }

  // The judge's call: keep all `chunks` (on topic) or drop all; unjudged (kept) on any error.
  async judge<T extends GatePassage>(question: string, chunks: T[], pool?: GatePassage[], queryVector?: number[]): Promise<GateVerdict<T>> {
    const all = [...(chunks ?? [])];
    if (!all.length) return { kept: all, rejected: 0, judged: false, verdict: null, reason: "no-chunks", ms: 0, score: null };
    if (typeof question !== "string" || !question.trim()) {
      return { kept: all, rejected: 0, judged: false, verdict: null, reason: "blank-question", ms: 0, score: null };
    }
    const started = performance.now();
    let result: GateVerdict<T>;
    try {
      const score = await this.score(question, pool ?? all, queryVector);
      const onTopic = score >= GATE_THRESHOLD;
      result = { kept: onTopic ? all : [], rejected: onTopic ? 0 : all.length, judged: true, verdict: onTopic, reason: null, ms: 0, score };
    } catch (error) {
      const reason = firstLine(error);
      (this.options.log ?? console.warn)(`relevance gate failed open: ${reason}`);
      result = { kept: all, rejected: 0, judged: false, verdict: null, reason, ms: 0, score: null };
    }
    result.ms = performance.now() - started;
    this.record(result);
    return result;
  }

  private record(result: GateVerdict<unknown>): void {
    const s = this.stats;
    s.calls += 1;
    s.rejected += result.rejected;
    s.totalMs += result.ms;
    s.maxMs = Math.max(s.maxMs, result.ms);
    if (!result.judged) {
      s.failures += 1;
      const key = result.reason ?? "unknown";
      s.reasons[key] = (s.reasons[key] ?? 0) + 1;
    }
  }

  // The eval harness's summary line, as the reference prints its judge's.
  line(): string {
    const s = this.stats;
    const mean = s.calls ? s.totalMs / s.calls : 0;
    return `Relevance check: ${s.model} · ${s.calls} calls · rejected ${s.rejected} chunk(s) · ${s.failures} failed open · mean ${Math.round(mean)}ms max ${Math.round(s.maxMs)}ms`;
  }
}
