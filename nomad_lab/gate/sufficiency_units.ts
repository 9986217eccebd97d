// The sufficiency check's text side in Node, as nomad_lab/data/sentence_units.py and answer_types.py compute
// it (part of the bundle `nomad-lab gate export sufficiency:... --to ts --bundle DIR` writes; do not edit).
//
// The constants and patterns are the Python modules' own, carried as data in sufficiency.ts (TEXT); the
// patterns are Python regular expressions, translated here to Python's Unicode meaning of \b, \d, \s and
// \w. Python's str.split(), str.strip() and str.splitlines() are mirrored exactly.

import { PY_SPACE } from "./cross_encoder.ts";

export interface TextTables {
  headingWords: number;
  contextWeight: number;
  functionWords: string[];
  heading: string;
  end: string;
  word: string;
  types: Record<string, string>;
  cues: [string, string][];
  unitAsked: string;
  namedUnits: string[];
}

const SPACE_CHARS = PY_SPACE.source.slice(1, -2); // the class body of /[...]+/
const WORD_CHAR = "\\p{L}\\p{N}_";
const BOUNDARY = `(?:(?<=[${WORD_CHAR}])(?![${WORD_CHAR}])|(?<![${WORD_CHAR}])(?=[${WORD_CHAR}]))`;
const SYNTAX = new Set("^$\\.*+?()[]{}|/-".split(""));

// A Python `re` pattern (str, no flags) as a JavaScript RegExp with the same Unicode classes.
export function pyRegex(pattern: string, flags = ""): RegExp {
  let out = "";
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const e = pattern[++i];
      if (e === "d") out += "\\p{Nd}";
      else if (e === "s") out += inClass ? SPACE_CHARS : `[${SPACE_CHARS}]`;
      else if (e === "w") out += inClass ? WORD_CHAR : `[${WORD_CHAR}]`;
      else if (e === "b" && !inClass) out += BOUNDARY;
      else if (/[A-Za-z0-9]/.test(e) || (SYNTAX.has(e) && (e !== "-" || inClass))) out += `\\${e}`;
      else out += e; // an escaped punctuation mark is itself (JavaScript's u mode refuses \" and the like)
      continue;
    }
    if (c === "[" && !inClass) inClass = true;
    else if (c === "]" && inClass) inClass = false;
    out += c;
  }
  return new RegExp(out, `u${flags}`);
}

const SPLIT_SPACE = new RegExp(`[${SPACE_CHARS}]+`, "u");
const STRIP = new RegExp(`^[${SPACE_CHARS}]+|[${SPACE_CHARS}]+$`, "gu");
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

export const pySplit = (text: string): string[] => text.split(SPLIT_SPACE).filter((w) => w.length > 0);
export const pyStrip = (text: string): string => text.replace(STRIP, "");
const stripChars = (text: string, chars: string): string => {
  let a = 0;
  let b = text.length;
  while (a < b && chars.includes(text[a])) a++;
  while (b > a && chars.includes(text[b - 1])) b--;
  return text.slice(a, b);
};
function splitlines(text: string): string[] {
  const lines = text.split(LINE_BREAK);
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export class UnitText {
  private readonly t: TextTables;
  private readonly stop: Set<string>;
  private readonly heading: RegExp;
  private readonly end: RegExp;
  private readonly word: RegExp;
  private readonly listItem = pyRegex("\\s*\\d+[.)]\\s", "y");
  private readonly listMarker = pyRegex("^\\s*(?:[-*+]|\\d+[.)])\\s+");
  private readonly types: Map<string, RegExp>;
  private readonly cues: [RegExp, string][];
  private readonly unitAsked: RegExp;
  private readonly named: Set<string>;

  constructor(tables: TextTables) {
    this.t = tables;
    this.stop = new Set(tables.functionWords);
    this.heading = pyRegex(tables.heading);
    this.end = pyRegex(tables.end);
    this.word = pyRegex(tables.word, "g");
    this.types = new Map(Object.entries(tables.types).map(([k, p]) => [k, pyRegex(p)]));
    this.cues = tables.cues.map(([p, kind]) => [pyRegex(p), kind]);
    this.unitAsked = pyRegex(tables.unitAsked, "g");
    this.named = new Set(tables.namedUnits);
  }

  private words(text: string): string[] {
    return [...text.matchAll(this.word)].map((m) => m[0]);
  }

  private stem(word: string): string {
    if (word.length > 4 && ["ches", "shes", "sses", "xes", "zes"].some((s) => word.endsWith(s))) return word.slice(0, -2);
    for (const suffix of ["ing", "ed", "s"]) {
      if (word.length > suffix.length + 3 && word.endsWith(suffix) && !word.endsWith("ss")) return word.slice(0, -suffix.length);
    }
    return word;
  }

  contentWords(text: string): string[] {
    return this.words(text.toLowerCase()).filter((w) => !this.stop.has(w)).map((w) => this.stem(w));
  }

  passageSentences(text: string): [string, string][] {
    let heading = "";
    const out: [string, string][] = [];
    const paragraph: string[] = [];
    const flush = (): void => {
      const joined = pyStrip(paragraph.join(" "));
      paragraph.length = 0;
      for (const sentence of joined.split(this.end)) {
        if (this.words(sentence.toLowerCase()).length >= 3) out.push([heading, pyStrip(sentence)]);
      }
    };
    let fenced = false;
    for (const line of splitlines(text)) {
      const stripped = pyStrip(line);
      if (stripped.startsWith("```") || stripped.startsWith("~~~")) {
        fenced = !fenced;
        flush();
        continue;
      }
      const match = fenced ? null : this.heading.exec(line);
      this.listItem.lastIndex = 0;
      const left = line.replace(new RegExp(`^[${SPACE_CHARS}]+`, "u"), "");
      if (match) {
        flush();
        heading = pyStrip(match[1]);
      } else if (!stripped || ["-", "*", "|", "+"].some((m) => left.startsWith(m)) || this.listItem.test(line)) {
        flush();
        if (stripped) {
          paragraph.push(stripChars(line.replace(this.listMarker, ""), " |"));
          flush();
        }
      } else {
        paragraph.push(stripped);
      }
    }
    flush();
    return out;
  }

  unitParts(text: string, words: number): [string, string][] {
    const sentences = this.passageSentences(text);
    return sentences.map(([heading, sentence], i) => {
      const own = pySplit(sentence).slice(0, words);
      const previous = i && sentences[i - 1][0] === heading ? pySplit(sentences[i - 1][1]) : [];
      const budget = words - own.length;
      const before = budget > 0 ? previous.slice(-budget) : [];
      const head = pySplit(heading).slice(0, Math.min(this.t.headingWords, Math.max(0, words - own.length - before.length)));
      const prefix = head.length ? `${head.join(" ")}: ` : "";
      return [prefix + [...before, ...own].join(" "), own.join(" ")];
    });
  }

  chooseUnits(question: string, units: string[], k: number, sentences: string[]): number[] {
    const asked = [...new Set(this.contentWords(question))];
    const bags = units.map((u) => new Set(this.contentWords(u)));
    const own = sentences.map((s) => new Set(this.contentWords(s)));
    const n = units.length;
    const weight = new Map(asked.map((w) => [w, Math.log(1 + n / (1 + bags.filter((b) => b.has(w)).length))]));
    const scores = bags.map((b, i) => {
      let sum = 0;
      for (const w of asked.filter((x) => b.has(x)).sort()) sum += weight.get(w)! * (own[i].has(w) ? 1.0 : this.t.contextWeight);
      return sum;
    });
    const order = [...Array(n).keys()].sort((a, b) => scores[b] - scores[a] || a - b);
    return order.slice(0, k).sort((a, b) => a - b);
  }

  questionUnits(question: string, passages: string[], k: number, words: number): string[] {
    const parts = passages.flatMap((p) => this.unitParts(p, words));
    const units = parts.map(([u]) => u);
    return this.chooseUnits(question, units, k, parts.map(([, s]) => s)).map((i) => units[i]);
  }

  expectedType(question: string): [string | null, string | null] {
    const lowered = pySplit(question.toLowerCase()).join(" ");
    const unit = [...lowered.matchAll(this.unitAsked)].map((m) => m[1].toLowerCase()).find((u) => this.named.has(u)) ?? null;
    for (const [cue, kind] of this.cues) if (cue.test(lowered)) return [kind, unit];
    return unit ? ["number", unit] : [null, null];
  }

  // Per unit: +1 holds a value of the asked type, -1 holds none, 0 the question asks for no value.
  typeShift(question: string, units: string[]): number[] {
    const [kind, unit] = this.expectedType(question);
    if (kind === null) return units.map(() => 0);
    const escaped = unit === null ? "" : unit.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
    const pattern = unit === null ? this.types.get(kind)! : pyRegex(`\\d[\\d,.]*\\s*${escaped}(?![a-z])`);
    return units.map((u) => (pattern.test(u.toLowerCase()) ? 1 : -1));
  }
}
