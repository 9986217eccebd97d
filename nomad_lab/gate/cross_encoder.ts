// The cross-encoder a nomad-lab gate reads, run in Node as nomad_lab/retrieval/cross_encoder.py runs it
// (part of the bundle `nomad-lab gate export GATE --to ts --bundle DIR` writes; do not edit by hand).
//
// The same model file and tokenizer.json, the same windows (180 words every 90, split on Python's
// whitespace, joined by one space), the same pair encoding ([CLS] question [SEP] window [SEP], cut at
// 512 tokens longest-first as the tokenizers library cuts a pair) and one pair per onnxruntime run: the
// model is INT8 with activations quantized per batch tensor, so a batch-mate would move a pair's logit.
// The bundle's test holds these scores to the ones nomad-lab stores within 1e-5.

import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import * as ort from "onnxruntime-node";
import { Tokenizer } from "@huggingface/tokenizers";

export interface CrossEncoderSpec {
  name: string;
  digest: string;
  modelKey: string;
  window: number;
  stride: number;
  maxTokens: number;
  model: string;
  tokenizer: string;
  modelDir: string;
}

// Python's str.split() separators (str.isspace): JavaScript's \s without U+FEFF, plus U+001C..U+001F, U+0085.
export const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

export function windows(text: string, window: number, stride: number): string[] {
  const words = text.split(PY_SPACE).filter((w) => w.length > 0);
  if (!words.length) return [];
  if (window === 0 || words.length <= window) return [words.join(" ")];
  const starts: number[] = [];
  for (let s = 0; s <= words.length - window; s += stride) starts.push(s);
  if (starts[starts.length - 1] + window < words.length) starts.push(words.length - window);
  return starts.map((s) => words.slice(s, s + window).join(" "));
}

// tokenizers' longest_first cut of a pair (src/utils/truncation.rs), `room` = the limit less the special tokens.
export function truncatePair(a: number[], b: number[], room: number): [number[], number[]] {
  if (a.length + b.length <= room) return [a, b];
  let n1 = Math.min(a.length, b.length);
  let n2 = Math.max(a.length, b.length);
  const swap = a.length > b.length;
  n2 = n1 > room ? n1 : Math.max(n1, room - n1);
  if (n1 + n2 > room) {
    n1 = Math.floor(room / 2);
    n2 = n1 + (room % 2);
  }
  if (swap) [n1, n2] = [n2, n1];
  return [a.slice(0, n1), b.slice(0, n2)];
}

// tokenizers' only_second cut: the second sequence gives up what the pair is over (an error if it cannot).
export function truncateSecond(a: number[], b: number[], room: number): [number[], number[]] {
  if (a.length + b.length <= room) return [a, b];
  if (a.length > room) throw new Error("truncation: the question alone is over the pair's tokens");
  return [a, b.slice(0, room - a.length)];
}

function specialIds(config: Record<string, any>): [number, number] {
  const post = config.post_processor ?? {};
  if (post.type === "BertProcessing") return [post.cls[1], post.sep[1]];
  if (post.type === "TemplateProcessing") {
    const special = post.special_tokens ?? {};
    const cls = special["[CLS]"]?.ids?.[0];
    const sep = special["[SEP]"]?.ids?.[0];
    if (typeof cls === "number" && typeof sep === "number") return [cls, sep];
  }
  throw new Error(`cross-encoder: tokenizer.json has a ${post.type} post-processor, not a BERT pair template`);
}

export class CrossEncoder {
  readonly spec: CrossEncoderSpec;
  private readonly session: ort.InferenceSession;
  private readonly tokenizer: Tokenizer;
  private readonly cls: number;
  private readonly sep: number;
  private readonly typeIds: boolean;

  private constructor(spec: CrossEncoderSpec, session: ort.InferenceSession, tokenizer: Tokenizer, config: Record<string, any>) {
    this.spec = spec;
    this.session = session;
    this.tokenizer = tokenizer;
    [this.cls, this.sep] = specialIds(config);
    this.typeIds = session.inputNames.includes("token_type_ids");
  }

  // The model of `spec`, from spec.modelDir (relative to `base`, the bundle's folder, unless absolute).
  static async load(spec: CrossEncoderSpec, base: string, threads = 2): Promise<CrossEncoder> {
    const dir = isAbsolute(spec.modelDir) ? spec.modelDir : join(base, spec.modelDir);
    const config = JSON.parse(readFileSync(join(dir, spec.tokenizer), "utf8"));
    const tokenizer = new Tokenizer(config, {});
    const session = await ort.InferenceSession.create(join(dir, spec.model), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionProviders: ["cpu"],
    });
    if (!session.inputNames.includes("input_ids") || !session.inputNames.includes("attention_mask")) {
      throw new Error(`cross-encoder ${spec.name}: expects inputs ${session.inputNames}, not a BERT-style model`);
    }
    return new CrossEncoder(spec, session, tokenizer, config);
  }

  private ids(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  // The pair's ids and type ids, as tokenizers encodes (question, window) with truncation at maxTokens
  // (longest_first, or only_second as the sufficiency check's body cuts a (question, unit) pair).
  encodePair(question: string, text: string, secondOnly = false): { ids: number[]; types: number[] } {
    const room = this.spec.maxTokens - 3;
    const [a, b] = secondOnly ? truncateSecond(this.ids(question), this.ids(text), room) : truncatePair(this.ids(question), this.ids(text), room);
    const ids = [this.cls, ...a, this.sep, ...b, this.sep];
    const types = ids.map((_, i) => (i < a.length + 2 ? 0 : 1));
    return { ids, types };
  }

  // The model's outputs for one (question, text) pair, alone in its run (an INT8 batch-mate would move them).
  async runPair(question: string, text: string, secondOnly = false): Promise<Record<string, ort.Tensor>> {
    const { ids, types } = this.encodePair(question, text, secondOnly);
    const shape = [1, ids.length];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), shape),
      attention_mask: new ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n), shape),
    };
    if (this.typeIds) feeds.token_type_ids = new ort.Tensor("int64", BigInt64Array.from(types, BigInt), shape);
    return this.session.run(feeds);
  }

  // One raw logit for (question, text): a one-output head as it is, a two-class head as log-odds of class 1.
  async scorePair(question: string, text: string): Promise<number> {
    const out = await this.runPair(question, text);
    const logits = out[this.session.outputNames[0]].data as Float32Array;
    if (logits.length === 1) return logits[0];
    if (logits.length === 2) return logits[1] - logits[0];
    throw new Error(`cross-encoder ${this.spec.name}: a head with ${logits.length} outputs is not a relevance cross-encoder`);
  }

  // Each passage's best window logit (NaN for an empty passage), in order.
  async score(question: string, passages: string[]): Promise<number[]> {
    const best: number[] = [];
    for (const passage of passages) {
      let top = NaN;
      for (const w of windows(passage, this.spec.window, this.spec.stride)) {
        const s = await this.scorePair(question, w);
        if (!Number.isFinite(s)) throw new Error(`cross-encoder ${this.spec.name}: a non-finite score`);
        top = Number.isNaN(top) ? s : Math.max(top, s);
      }
      best.push(top);
    }
    return best;
  }
}

// The gate's ce features from the top set's passage scores, as nomad_lab/eval/gating/inputs/ce_features.py:
// best, second best (the best when one passage) and mean of the non-NaN scores; 0 for none.
export function ceFeatures(scores: number[]): Record<string, number> {
  const valid = scores.filter((s) => !Number.isNaN(s));
  if (!valid.length) return { ce_best: 0, ce_second: 0, ce_mean: 0 };
  const ordered = [...valid].sort((a, b) => b - a);
  let sum = 0;
  for (const s of valid) sum += s;
  return { ce_best: ordered[0], ce_second: ordered.length > 1 ? ordered[1] : ordered[0], ce_mean: sum / valid.length };
}
