/** A count with its noun, singular for one: "1 round", "2 rounds". */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
