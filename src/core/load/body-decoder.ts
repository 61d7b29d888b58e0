import { BrotliDecompress, Gunzip, Inflate, InflateRaw } from 'minizlib';

/** Most bytes one slice of compressed input may decode to: 64× its size, far past what text compresses to. */
const MAX_DECODED_PER_SLICE = 1 << 20;
/** Compressed input is decoded this much at a time, so each slice's output is bounded before it is made. */
const SLICE_BYTES = 16 << 10;

/** What a compressed body decoded to, or why it could not be. */
export type DecodeResult = { pieces: Buffer[] } | { error: string; kind: 'bad-encoding' | 'decoded-too-large' };

/** Decodes one response body read by read, synchronously, so every decoded byte keeps the time of its network read. */
export interface BodyDecoder {
  /** The encoding's name as the server sent it (for messages). */
  readonly name: string;
  /** Decodes one network read (nothing while the decoder needs more input). */
  push(chunk: Buffer): DecodeResult;
  /** End of the body: what the decoder still held. A body cut inside the encoding is left to the caller to judge. */
  end(): DecodeResult;
}

/**
 * Synchronous (each write's output is emitted before write returns, so it keeps its read's time); a fresh object for
 * each stream, as minizlib fills in its flush flags; node:zlib's maxOutputLength bounds what one write decodes to.
 */
const options = () => ({ async: false, maxOutputLength: MAX_DECODED_PER_SLICE }) as const;

/** The encodings decoded: names as in HTTP's Content-Encoding registry (x-gzip is gzip's old name). */
const DECODERS: Record<string, () => Gunzip | Inflate | InflateRaw | BrotliDecompress> = {
  gzip: () => new Gunzip(options()),
  'x-gzip': () => new Gunzip(options()),
  br: () => new BrotliDecompress(options()),
  deflate: () => new Inflate(options()),
};

/** RFC 9110's deflate is zlib-wrapped, but some servers send raw deflate (as browsers accept): the first byte says. */
function isZlibHeader(first: number, second: number): boolean {
  return (first & 0x0f) === 8 && ((first << 8) | second) % 31 === 0;
}

/**
 * The decoder for a response's Content-Encoding: null for none (or identity), a decoder for gzip, deflate or br, or
 * one line naming an encoding servebench does not decode (several stacked, zstd, compress...) and the fix.
 */
export function bodyDecoderFor(
  contentEncoding: string | undefined,
): { decoder: BodyDecoder | null } | { refused: string } {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return { decoder: null };
  const make = codings.length === 1 ? DECODERS[codings[0]!] : undefined;
  if (!make) {
    const shown = JSON.stringify((contentEncoding ?? '').slice(0, 60));
    return {
      refused: `the server answered with Content-Encoding ${shown}, which servebench does not decode (it decodes one of gzip, deflate, br): turn response compression off in the proxy in front of the server, or point --url at the server itself`,
    };
  }
  return { decoder: createDecoder(codings[0]!, make) };
}

function createDecoder(name: string, make: () => Gunzip | Inflate | InflateRaw | BrotliDecompress): BodyDecoder {
  let stream: Gunzip | Inflate | InflateRaw | BrotliDecompress | null = null;
  let out: Buffer[] = [];
  let failure: Error | null = null;
  let head: Buffer | null = null;
  const open = (s: typeof stream & object): void => {
    s.on('data', (b: Buffer) => out.push(b));
    s.on('error', (e: unknown) => (failure ??= e instanceof Error ? e : new Error(String(e))));
    stream = s;
  };
  const verdict = (): DecodeResult => {
    const pieces = out;
    out = [];
    if (!failure) return { pieces };
    const code = (failure as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') {
      return {
        error: `the server's ${name} body decodes to over ${MAX_DECODED_PER_SLICE >> 20} MiB per ${SLICE_BYTES >> 10} KiB received (a decompression bomb): the connection was dropped`,
        kind: 'decoded-too-large',
      };
    }
    return {
      error: `the server's ${name} body does not decode (${failure.message.replace(/^zlib: /, '')}): a broken proxy or server; turn its response compression off`,
      kind: 'bad-encoding',
    };
  };
  const write = (chunk: Buffer): void => {
    for (let at = 0; at < chunk.length && !failure && stream; at += SLICE_BYTES) {
      stream.write(chunk.subarray(at, at + SLICE_BYTES));
    }
  };
  return {
    name,
    push(chunk) {
      if (failure) return verdict();
      if (!stream && name === 'deflate') {
        // Two bytes tell zlib-wrapped from raw deflate; hold a first read of one byte until the second comes.
        const bytes: Buffer = head ? Buffer.concat([head, chunk]) : chunk;
        if (bytes.length < 2) {
          head = bytes;
          return { pieces: [] };
        }
        head = null;
        open(isZlibHeader(bytes[0]!, bytes[1]!) ? make() : new InflateRaw(options()));
        write(bytes);
        return verdict();
      }
      if (!stream) open(make());
      write(chunk);
      return verdict();
    },
    end() {
      if (failure || !stream) return verdict();
      // A body cut inside the encoding (a missing gzip trailer) is no decoding error: the stream's own end rules judge it.
      const s = stream;
      s.removeAllListeners('error');
      s.on('error', () => undefined);
      try {
        s.end();
      } catch {
        // Same: judged by the body, not by the encoding.
      }
      return { pieces: out.splice(0) };
    },
  };
}
