import { describe, expect, it } from 'vitest';
import { structuredOutputCheck } from '../../../src/core/checks/structured-output.js';
import type { RequestRecord, StructuredVerdict } from '../../../src/shared/request-record.js';

const rec = (structured: StructuredVerdict | undefined, ok = true): RequestRecord =>
  ({ ok, warmup: false, round: 0, structured }) as unknown as RequestRecord;
const ASK = '--response-format json-schema=p.json';

describe('the structured-output check', () => {
  it('does not apply without a structured ask on the records', () => {
    expect(structuredOutputCheck([rec(undefined)], ASK)).toBeNull();
  });

  it('passes when every ok answer is valid (failed requests are the errors check)', () => {
    const c = structuredOutputCheck([rec({ valid: true }), rec({ valid: true }), rec(undefined, false)], ASK);
    expect(c).toMatchObject({ status: 'pass', code: 'all-valid', facts: { answers: 2, invalid: 0 } });
  });

  it('fails as invalid with the problems counted when some are not', () => {
    const c = structuredOutputCheck(
      [rec({ valid: true }), rec({ valid: false, problem: 'schema', detail: '/a: must be integer' })],
      ASK,
    );
    expect(c).toMatchObject({
      status: 'fail',
      code: 'invalid',
      facts: { invalid: 1, share: 0.5, problems: 'schema 1' },
    });
  });

  it('fails as ignored when none is: the server fell back to free text', () => {
    const c = structuredOutputCheck([rec({ valid: false, problem: 'not-json', detail: 'not JSON: "Sure"' })], ASK);
    expect(c).toMatchObject({
      status: 'fail',
      code: 'ignored',
      facts: { problems: 'not-json 1', example: 'not JSON: "Sure"' },
    });
  });
});
