import { isPooling, type EndpointKind } from '../../shared/endpoint-kinds.js';
import type { LevelResult, RoundResult } from '../../shared/run-record.js';
import { costPerMillionOutputTokens } from './cost.js';
import { coefficientOfVariation } from './throughput.js';

/** What a pooling level's figures need beyond its result. */
export interface PoolingFigureInput {
  endpoint?: EndpointKind;
  batchSize?: number;
  gpuPricePerHour?: number;
  utilization?: number;
}

/**
 * A pooling level's own figures (embeddings, rerank): inputs/s = req/s x inputs per request; input tok/s = the
 * rounds' mean of prompt tokens / window (nothing is generated, so total tok/s is all input); the round spread is
 * the CV of per-round input tok/s; cost per million input tokens as output cost is, from input tok/s.
 */
export function addPoolingFigures(
  result: LevelResult,
  input: PoolingFigureInput,
  complete: readonly RoundResult[],
): void {
  if (!isPooling(input.endpoint)) return;
  const batch = input.batchSize ?? 1;
  result.endpoint = input.endpoint;
  result.batchSize = batch;
  result.inputsPerSec = result.reqPerSec === null ? null : result.reqPerSec * batch;
  result.inputTokPerSec = result.totalTokPerSec;
  result.roundCv = coefficientOfVariation(complete.map((r) => r.totalTokPerSec));
  const tokPerSec = result.inputTokPerSec;
  if (input.gpuPricePerHour === undefined || tokPerSec === null) return;
  const peak = costPerMillionOutputTokens(input.gpuPricePerHour, tokPerSec);
  if (peak !== null) result.costPerMInputTokUsd = peak;
  if (input.utilization !== undefined) {
    const atU = costPerMillionOutputTokens(input.gpuPricePerHour, tokPerSec, input.utilization);
    if (atU !== null) result.costPerMInputTokAtUtilizationUsd = atU;
  }
}
