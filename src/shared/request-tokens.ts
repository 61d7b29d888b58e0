/** Prompt plus output tokens of a request's longest turn: a conversation's last turn carries every turn before it. */
export function requestTokens(inputLen: number, outputLen: number, turns = 1): number {
  return turns * (inputLen + outputLen);
}
