// Half-precision rounding for the sufficiency bundle (part of the bundle `nomad-lab gate export sufficiency:...
// --to ts --bundle DIR` writes; do not edit).
//
// Why by hand: the head was trained on keys and values rounded to binary16 (numpy's float16: round half
// to even, subnormals, overflow to infinity), and `Math.f16round` exists only from Node 24, while a server
// on Node 22 (the first that runs TypeScript) must decide as Python does; without it the check failed
// open on every question there.

/** `x` rounded to the nearest binary16 value, ties to even, as numpy's float16 cast rounds. */
export function f16round(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  if (a >= 65520) return Math.sign(x) * Infinity; // at or past the midpoint of 65504 and 2^16
  let exp = Math.floor(Math.log2(a));
  if (2 ** exp > a) exp -= 1;
  else if (2 ** (exp + 1) <= a) exp += 1;
  const step = 2 ** (Math.max(exp, -14) - 10); // 10 fraction bits; below 2^-14 the subnormals' step
  const q = a / step;
  const floor = Math.floor(q);
  const rest = q - floor;
  const n = rest > 0.5 || (rest === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  return Math.sign(x) * n * step;
}

/** The runtime's own rounding where it has one (the same function), else {@link f16round}. */
export const halfRound: (x: number) => number =
  (Math as { f16round?: (x: number) => number }).f16round ?? f16round;
