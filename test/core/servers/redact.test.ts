import { describe, expect, it } from 'vitest';
import { isSecretName, redactLine, scrubSecrets } from '../../../src/core/servers/redact.js';

describe('secret names', () => {
  it('are names with KEY, TOKEN, SECRET, PASS, AUTH, CREDENTIAL or BEARER ending a word', () => {
    for (const name of ['OPENAI_KEY', 'DB_PASS', 'DB_PASSWORD', 'HF_TOKEN', '--api-key', 'apiKey', 'accessToken'])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ['AWS_SECRETS', 'x-authorization', 'MY_AUTH', 'GCP_CREDENTIALS', 'bearer'])
      expect(isSecretName(name), name).toBe(true);
  });

  it('are not counts, tokenizer settings or our own metric names', () => {
    for (const name of ['--max-num-batched-tokens', 'TOKENIZERS_PARALLELISM', 'firstTokenMs', 'itlPerTokenMs'])
      expect(isSecretName(name), name).toBe(false);
    for (const name of ['tokensPerChunk', '--tokenizer', 'author', 'bypassing'])
      expect(isSecretName(name), name).toBe(false);
  });
});

describe('redaction of text', () => {
  it('blanks values after secret names, and leaves JSON structure and metric fields alone', () => {
    expect(redactLine('OPENAI_KEY=abc123xyz DB_PASS: hunter22')).toBe('OPENAI_KEY=*** DB_PASS: ***');
    expect(redactLine('"itlPerTokenMs": {')).toBe('"itlPerTokenMs": {');
    expect(redactLine('"apiKey": {"nested": 1}')).toBe('"apiKey": {"nested": 1}');
  });

  it('scrubs known values and key shapes from rendered exports without reading names', () => {
    const text = '{"firstTokenMs": 12.5, "note": "used hf_abcdefghijklmnopqrstu and s3cr3t-value"}';
    expect(scrubSecrets(text, ['s3cr3t-value'])).toBe('{"firstTokenMs": 12.5, "note": "used *** and ***"}');
  });
});

describe('redaction of a config', () => {
  it('blanks secret flags in an --engine command argv, and counts their values as secrets', async () => {
    const { redactBenchConfig, benchSecretValues } = await import('../../../src/core/servers/redact.js');
    const { BenchConfigSchema } = await import('../../../src/shared/config.js');
    const command = ['srv', '--port', '{port}', '--api-key', 'cmd-secret-value-1', '--token=cmd-secret-value-2'];
    const config = BenchConfigSchema.parse({ server: { engine: 'command', command } });
    expect(redactBenchConfig(config).server.command).toEqual([
      'srv',
      '--port',
      '{port}',
      '--api-key',
      '***',
      '--token=***',
    ]);
    expect(benchSecretValues(config)).toEqual(expect.arrayContaining(['cmd-secret-value-1', 'cmd-secret-value-2']));
  });
});
