/**
 * Cost per million output tokens: price / (tok/s x 3600) x 1e6, divided by the average utilization u
 * (an idle GPU still costs money). The article's written formula is wrong; its examples ($2/h at 2000 tok/s
 * -> $0.278; at 500 tok/s -> $1.11) are right and this matches them. Null when throughput is not positive.
 */
export function costPerMillionOutputTokens(
  pricePerHour: number,
  outputTokPerSec: number,
  utilization: number = 1,
): number | null {
  if (!(outputTokPerSec > 0) || !(utilization > 0)) return null;
  return ((pricePerHour / (outputTokPerSec * 3600)) * 1e6) / utilization;
}

/**
 * An API's price per million tokens blended by the run's input:output ratio (token-weighted average of the
 * input and output prices), comparable with a self-hosted cost per million total tokens.
 */
export function blendedApiPrice(
  inputPricePerM: number,
  outputPricePerM: number,
  inputLen: number,
  outputLen: number,
): number {
  const total = inputLen + outputLen;
  if (!(total > 0)) throw new RangeError('blendedApiPrice needs a positive inputLen + outputLen');
  return (inputPricePerM * inputLen + outputPricePerM * outputLen) / total;
}

/**
 * What an API charges per million output tokens when each output token comes with inputLen/outputLen prompt
 * tokens: directly comparable with costPerMillionOutputTokens, whose GPU hour also paid for the prefill.
 */
export function apiCostPerMillionOutputTokens(
  inputPricePerM: number,
  outputPricePerM: number,
  inputLen: number,
  outputLen: number,
): number {
  if (!(outputLen > 0)) throw new RangeError('apiCostPerMillionOutputTokens needs a positive outputLen');
  return outputPricePerM + (inputPricePerM * inputLen) / outputLen;
}
