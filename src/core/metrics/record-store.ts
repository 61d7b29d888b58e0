import type { RequestRecord } from '../../shared/request-record.js';

// A level's condensed records held as columns of typed arrays (about 0.2 KB a record instead of 0.75 KB as objects).
// Each record reads back through a small view object whose getters read its row: every field exactly as it was
// given (a value a column cannot hold exactly stays in the row's own `rest` object), so every figure built from the
// views is the one built from the records.

type Kind = 'f64' | 'i32' | 'str';

/** A stored record's key and the column that holds it. */
interface Field {
  key: string;
  kind: Kind;
}

// A field left out of a row (undefined) or null; a value equal to a sentinel is kept in `rest`.
const F_ABSENT = -1.5e-300;
const F_NULL = -2.5e-300;
const I_ABSENT = -2147483648;
const I_NULL = -2147483647;
const S_ABSENT = -1;
const S_NULL = -2;

const f = (key: string): Field => ({ key, kind: 'f64' });
const i = (key: string): Field => ({ key, kind: 'i32' });
const s = (key: string): Field => ({ key, kind: 'str' });

// The plain fields of a record (chunks, http, requestTag, warmup and ok have their own columns below).
const FIELDS: Field[] = [
  i('id'),
  i('levelIndex'),
  i('round'),
  f('scheduledMs'),
  f('sendMs'),
  f('firstTokenMs'),
  f('endMs'),
  f('ttftMs'),
  f('e2eMs'),
  i('nOut'),
  s('nOutSource'),
  s('chunkTokensSource'),
  i('clientChunkCount'),
  i('nIn'),
  i('expectedIn'),
  i('expectedOut'),
  s('finishReason'),
  s('error'),
  s('errorKind'),
  i('httpStatus'),
  i('malformedLines'),
  f('firstContentMs'),
  i('nReasoning'),
  i('nContent'),
  s('nReasoningSource'),
  s('expectedInSource'),
  f('serverPromptMs'),
  f('serverDecodeMs'),
  s('adapter'),
  i('replica'),
  i('worker'),
  i('cachedPromptTokens'),
];

// The HTTP phases, in the order a record's own object has them.
const HTTP_FIELDS = ['connectStartMs', 'connectEndMs', 'requestSentMs', 'headersMs', 'firstByteMs'].map(f);
const HTTP_KEYS = HTTP_FIELDS.map((x) => `http.${x.key}`);
const CHUNK_FIELDS = [f('chunk0Ms'), f('chunk0Tokens'), f('chunk1Ms'), f('chunk1Tokens'), i('tagNumber'), s('tagStem')];
const OWN_KEYS = new Set([...FIELDS.map((x) => x.key), 'chunks', 'http', 'requestTag', 'warmup', 'ok']);
// Fields a view answers for from its row's `rest` alone (objects, and rare).
const REST_KEYS = ['workload', 'usageProblems'];

const FLAG_WARMUP = 1;
const FLAG_OK = 2;
const FLAG_HTTP = 4;
// Bits 3-4: how many chunk pairs the row holds (0-2).
const CHUNKS_SHIFT = 3;

type Typed = Float64Array | Int32Array;

function absentOf(kind: Kind): number {
  return kind === 'f64' ? F_ABSENT : kind === 'i32' ? I_ABSENT : S_ABSENT;
}

function fresh(kind: Kind, length: number): Typed {
  const col = kind === 'f64' ? new Float64Array(length) : new Int32Array(length);
  return col.fill(absentOf(kind));
}

const STORE = Symbol('store');
const ROW = Symbol('row');

/** One row of a RecordStore read as a RequestRecord (its getters read the columns; setters write the row's `rest`). */
class StoredRecord {
  [STORE]: RecordStore;
  [ROW]: number;
  constructor(store: RecordStore, row: number) {
    this[STORE] = store;
    this[ROW] = row;
  }
}

/** Columns of condensed records (at most two chunk pairs each), grown by doubling; see the module comment. */
export class RecordStore {
  private capacity = 0;
  private rows = 0;
  private readonly columns = new Map<string, Typed>();
  private flags = new Uint8Array(0);
  private restOf = new Int32Array(0);
  private readonly rests: Array<Record<string, unknown>> = [];
  private readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();

  /** Rows held. */
  get length(): number {
    return this.rows;
  }

  /** Stores a record and returns its view: a RequestRecord whose every field reads back as it was given. */
  push(record: RequestRecord): RequestRecord {
    if (this.rows === this.capacity) this.grow();
    const row = this.rows++;
    const rest: Record<string, unknown> = {};
    const src = record as unknown as Record<string, unknown>;
    for (const field of FIELDS) this.put(field, row, src[field.key], rest);
    let flags = 0;
    if (record.warmup === true) flags |= FLAG_WARMUP;
    else if (record.warmup !== false) rest.warmup = record.warmup;
    if (record.ok === true) flags |= FLAG_OK;
    else if (record.ok !== false) rest.ok = record.ok;
    flags |= this.putChunks(row, record.chunks, rest) << CHUNKS_SHIFT;
    if (this.putHttp(row, record.http, rest)) flags |= FLAG_HTTP;
    this.putTag(row, record.requestTag, rest);
    for (const key of REST_KEYS) if (Object.hasOwn(src, key)) rest[key] = src[key];
    this.flags[row] = flags;
    if (Object.keys(rest).length > 0) this.restOf[row] = this.rests.push(rest) - 1;
    const view = new StoredRecord(this, row) as unknown as Record<string, unknown>;
    // A key no record type names is the view's own (a test's or a later version's field).
    for (const key of Object.keys(src)) if (!OWN_KEYS.has(key) && !REST_KEYS.includes(key)) view[key] = src[key];
    return view as unknown as RequestRecord;
  }

  private grow(): void {
    const next = Math.max(1024, this.capacity * 2);
    for (const [key, col] of this.columns) {
      const bigger = fresh(col instanceof Float64Array ? 'f64' : 'i32', next);
      bigger.set(col);
      this.columns.set(key, bigger);
    }
    const flags = new Uint8Array(next);
    flags.set(this.flags);
    this.flags = flags;
    const restOf = new Int32Array(next).fill(-1);
    restOf.set(this.restOf);
    this.restOf = restOf;
    this.capacity = next;
  }

  // A column is made the first time a row has a value for it: most records leave most optional fields out.
  private column(key: string, kind: Kind): Typed {
    let col = this.columns.get(key);
    if (!col) this.columns.set(key, (col = fresh(kind, this.capacity)));
    return col;
  }

  private put(field: Field, row: number, v: unknown, rest: Record<string, unknown>, key = field.key): void {
    if (v === undefined) return;
    const code = this.encode(field.kind, v);
    if (code === null) rest[key] = v;
    else this.column(key, field.kind)[row] = code;
  }

  // The column value of v, or null when the column cannot hold it exactly.
  private encode(kind: Kind, v: unknown): number | null {
    if (kind === 'str') {
      if (v === null) return S_NULL;
      return typeof v === 'string' ? this.intern(v) : null;
    }
    if (kind === 'i32') {
      if (v === null) return I_NULL;
      return typeof v === 'number' && Number.isInteger(v) && v > I_NULL && v <= 2147483647 && !Object.is(v, -0)
        ? v
        : null;
    }
    if (v === null) return F_NULL;
    return typeof v === 'number' && v !== F_ABSENT && v !== F_NULL ? v : null;
  }

  private intern(v: string): number {
    let k = this.stringIndex.get(v);
    if (k === undefined) {
      k = this.strings.push(v) - 1;
      this.stringIndex.set(v, k);
    }
    return k;
  }

  private putChunks(row: number, chunks: unknown, rest: Record<string, unknown>): number {
    const pairs = Array.isArray(chunks) && chunks.length <= 2 && chunks.every(isPair) ? (chunks as number[][]) : null;
    if (!pairs) {
      rest.chunks = chunks;
      return 0;
    }
    pairs.forEach((pair, k) => {
      this.column(`chunk${k}Ms`, 'f64')[row] = pair[0]!;
      this.column(`chunk${k}Tokens`, 'f64')[row] = pair[1]!;
    });
    return pairs.length;
  }

  private putHttp(row: number, http: unknown, rest: Record<string, unknown>): boolean {
    if (http === undefined) return false;
    const h = http as Record<string, unknown> | null;
    const keys = h !== null && typeof h === 'object' ? Object.keys(h) : null;
    const canonical = HTTP_FIELDS.map((x) => x.key).filter((k) => keys?.includes(k));
    const codes = keys && keys.join() === canonical.join() ? canonical.map((k) => this.encode('f64', h![k])) : null;
    if (!codes || codes.some((c) => c === null) || keys!.some((k) => h![k] === undefined)) {
      rest.http = http;
      return false;
    }
    canonical.forEach((k, n) => (this.column(`http.${k}`, 'f64')[row] = codes[n]!));
    return true;
  }

  // A tag is kept as its stem and trailing number when they give it back exactly (`run-3-1207`); else whole.
  private putTag(row: number, tag: unknown, rest: Record<string, unknown>): void {
    const m = typeof tag === 'string' ? /^(.*?)(\d{1,9})$/.exec(tag) : null;
    const n = m ? Number(m[2]) : NaN;
    if (!m || String(n) !== m[2]) {
      if (tag !== undefined) rest.requestTag = tag;
      return;
    }
    this.column('tagStem', 'i32')[row] = this.intern(m[1]!);
    this.column('tagNumber', 'i32')[row] = n;
  }

  /** The field `key` of row `row`, as it was given. */
  read(row: number, key: string): unknown {
    const r = this.restOf[row]!;
    if (r !== -1) {
      const rest = this.rests[r]!;
      if (Object.hasOwn(rest, key)) return rest[key];
    }
    const flags = this.flags[row]!;
    if (key === 'warmup') return (flags & FLAG_WARMUP) !== 0;
    if (key === 'ok') return (flags & FLAG_OK) !== 0;
    if (key === 'chunks') return this.chunks(row, flags >> CHUNKS_SHIFT);
    if (key === 'http') return flags & FLAG_HTTP ? this.http(row) : undefined;
    if (key === 'requestTag') return this.tag(row);
    if (REST_KEYS.includes(key)) return undefined;
    return this.value(row, key, KIND_OF.get(key)!);
  }

  private value(row: number, key: string, kind: Kind): unknown {
    const col = this.columns.get(key);
    const v = col ? col[row]! : absentOf(kind);
    if (kind === 'str') return v === S_ABSENT ? undefined : v === S_NULL ? null : this.strings[v];
    if (kind === 'i32') return v === I_ABSENT ? undefined : v === I_NULL ? null : v;
    return v === F_ABSENT ? undefined : v === F_NULL ? null : v;
  }

  private chunks(row: number, count: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let k = 0; k < count; k++) {
      out.push([this.columns.get(`chunk${k}Ms`)![row]!, this.columns.get(`chunk${k}Tokens`)![row]!]);
    }
    return out;
  }

  private http(row: number): RequestRecord['http'] {
    const out: Record<string, unknown> = {};
    HTTP_FIELDS.forEach((x, n) => {
      const v = this.value(row, HTTP_KEYS[n]!, 'f64');
      if (v !== undefined) out[x.key] = v;
    });
    return out as unknown as RequestRecord['http'];
  }

  private tag(row: number): string | undefined {
    const stem = this.value(row, 'tagStem', 'str');
    return stem === undefined ? undefined : `${stem as string}${this.value(row, 'tagNumber', 'i32') as number}`;
  }

  /** Sets a field of a row (kept in its `rest`, which every read looks at first). */
  write(row: number, key: string, v: unknown): void {
    if (this.restOf[row] === -1) this.restOf[row] = this.rests.push({}) - 1;
    this.rests[this.restOf[row]!]![key] = v;
  }
}

const KIND_OF = new Map<string, Kind>([...FIELDS, ...CHUNK_FIELDS].map((x) => [x.key, x.kind]));
HTTP_FIELDS.forEach((x, n) => KIND_OF.set(HTTP_KEYS[n]!, x.kind));

function isPair(x: unknown): boolean {
  return (
    Array.isArray(x) &&
    x.length === 2 &&
    Object.keys(x).length === 2 &&
    typeof x[0] === 'number' &&
    typeof x[1] === 'number'
  );
}

for (const key of [...OWN_KEYS, ...REST_KEYS]) {
  Object.defineProperty(StoredRecord.prototype, key, {
    enumerable: true,
    get(this: StoredRecord) {
      return this[STORE].read(this[ROW], key);
    },
    set(this: StoredRecord, v: unknown) {
      this[STORE].write(this[ROW], key, v);
    },
  });
}
