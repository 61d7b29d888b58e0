// Shared so the app's form can mask what the writers redact, by the same rule.

/** What replaces a secret wherever servebench writes or shows text. */
export const REDACTED = '***';

// KEY, TOKEN, SECRET, PASS(WORD), AUTH, CREDENTIAL, BEARER anywhere in the name, ending a word: a letter
// after it makes another word (TOKENS and TOKENIZERS are counts and settings, firstTokenMs a metric).
const SECRET_WORD =
  /(?:KEYS?|SECRETS?|PASS(?:WORD|WD|PHRASE)?|AUTH(?:ORIZATION)?|CREDENTIALS?|BEARER|TOKEN)(?![A-Za-z])/i;

/**
 * True when an environment variable's or a flag's name says its value is secret: it contains KEY,
 * TOKEN, SECRET, PASS, AUTH, CREDENTIAL or BEARER (OPENAI_KEY, DB_PASS, HF_TOKEN, --api-key).
 */
export function isSecretName(name: string): boolean {
  return SECRET_WORD.test(name);
}
