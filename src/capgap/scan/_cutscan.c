/* Byte scans of the statement cut (capgap.scan.chunks), of the relevance test of a file
 * (capgap.scan.fileparse.relevance) and of the lines holding a hint (capgap.scan.hintlines), done
 * in one C pass each.
 *
 * Optional: chunks.py falls back to its pure-Python reference when this module is absent (or a
 * build of older source), and every function here returns exactly what that reference returns
 * (same ints, same order; hint_lines answers None where it cannot be sure, and the caller
 * searches in Python).
 *
 * Each regular expression of the reference is replayed as "does it match at offset i, and where
 * does the match end". re.finditer reports the leftmost match at or after its search position and
 * resumes at the match's end, so a left-to-right walk that tries a pattern at every offset at or
 * after that pattern's own resume point (`next_ok`) finds exactly finditer's matches, including
 * for patterns that can overlap themselves (`lackwell` in `lackwellackwell` is found once). Every
 * pattern here matches deterministically at a given offset (no backtracking choice changes the
 * outcome; argued beside each one), so "match at i" has a single end.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A growable list of offsets, turned into a Python list at the end. */
typedef struct {
    Py_ssize_t *items;
    Py_ssize_t len, cap;
} Offsets;

static int offsets_push(Offsets *o, Py_ssize_t v) {
    if (o->len == o->cap) {
        Py_ssize_t cap = o->cap ? o->cap * 2 : 64;
        Py_ssize_t *items = PyMem_Realloc(o->items, (size_t)cap * sizeof(Py_ssize_t));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->items = items;
        o->cap = cap;
    }
    o->items[o->len++] = v;
    return 0;
}

static PyObject *offsets_to_list(Offsets *o) {
    PyObject *list = PyList_New(o->len);
    if (list == NULL) return NULL;
    for (Py_ssize_t k = 0; k < o->len; k++) {
        PyObject *v = PyLong_FromSsize_t(o->items[k]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, k, v);
    }
    return list;
}

/* The quote offsets as C integers; bisect_left over them as bisect does it (same halving, so the
 * same answer even for a list that is not sorted). Values beyond a C integer are clamped: only
 * their order against in-range offsets matters. */
typedef struct {
    long long *items;
    Py_ssize_t len;
} Quotes;

static int quotes_from_list(PyObject *list, Quotes *q) {
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "quotes must be a list of ints");
        return -1;
    }
    q->len = PyList_GET_SIZE(list);
    q->items = PyMem_Malloc((size_t)(q->len ? q->len : 1) * sizeof(long long));
    if (q->items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < q->len; k++) {
        PyObject *v = PyList_GET_ITEM(list, k);
        int overflow = 0;
        long long x;
        if (!PyLong_Check(v)) {
            PyMem_Free(q->items);
            PyErr_SetString(PyExc_TypeError, "quotes must be a list of ints");
            return -1;
        }
        x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) {
            PyMem_Free(q->items);
            return -1;
        }
        q->items[k] = overflow > 0 ? LLONG_MAX : overflow < 0 ? LLONG_MIN : x;
    }
    return 0;
}

static int in_string(const Quotes *q, Py_ssize_t pos) {
    Py_ssize_t lo = 0, hi = q->len;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (q->items[mid] < (long long)pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int)(lo % 2);
}

/* quotes(data) == sorted(m.start() for q in (b'"""', b"'''") for m in q.finditer(data)) */
static PyObject *cutscan_quotes(PyObject *self, PyObject *args) {
    PyObject *data_obj, *result = NULL;
    Offsets out = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!:quotes", &PyBytes_Type, &data_obj)) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    /* Each kind resumes after its own match (finditer per pattern). A triple quote starting at i,
     * i + 1 or i + 2 holds byte i + 2: unless that byte is a quote, all three are passed over at
     * once (the skip a fast literal search makes). Otherwise only its kind can start there, and the
     * three starts are tried in order, so the offsets of both kinds come out merged and sorted. */
    Py_ssize_t next_ok[2] = {0, 0};
    for (Py_ssize_t i = 0; i + 3 <= len; i += 3) {
        unsigned char c = s[i + 2];
        if (c != '"' && c != '\'') continue;
        int kind = c == '\'';
        for (Py_ssize_t k = i; k <= i + 2 && k + 3 <= len; k++) {
            if (k >= next_ok[kind] && s[k] == c && s[k + 1] == c && s[k + 2] == c) {
                if (offsets_push(&out, k) < 0) goto fail;
                next_ok[kind] = k + 3;
            }
        }
    }
    result = offsets_to_list(&out);
fail:
    PyMem_Free(out.items);
    return result;
}

/* ---- code_hits: prefilter.hit_offsets(data, names=True) filtered by chunks._code_hits ---- */

/* bytes.lower(): ASCII letters only. Filled by the module's init. */
static unsigned char LOWER[256];
/* Each pair of raw bytes (as a 16-bit load reads them) whose lowercase can begin a pattern: every
 * pattern is at least two bytes long, and most offsets are passed over with one look-up here. */
static unsigned char PAIRS[65536];

static int is_lower_alnum(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
/* bytes-regex `\s` */
static int is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Literal patterns: the CAP_TOKENS, the CC_KEY_TOKENS and the plain name tokens. */
enum {
    L_APABILIT, L_LACKWELL, L_HOPPER, L_DEVICE_SM, L_RCH_LIST, L_CUDA_ARCH, L_SM_VERSION, L_GENCODE,
    L_KEY9, L_KEY10, L_DQ0, L_SQ0, L_TUPLE0,
    L_MAJOR, L_AMPERE, L_CAPAB,
    L_COUNT
};
static const char *const LITERALS[L_COUNT] = {
    "apabilit", "lackwell", "hopper", "device_sm", "rch_list", "cuda_arch", "sm_version", "gencode",
    "9: ", "10: ", ".0\": ", ".0': ", ", 0): ",
    "major", "ampere", "capab",
};
/* The regex patterns, each with its own resume point; their first two bytes. */
enum { R_ARCH = L_COUNT, R_CC, R_SM_NAME, R_SM, R_SM_KEY, P_COUNT };
static const char *const REGEX_HEADS[] = {"ar", "cc", "sm"};

static void init_tables(void) {
    for (int c = 0; c < 256; c++) LOWER[c] = (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    const char *heads[L_COUNT + 3];
    for (int k = 0; k < L_COUNT; k++) heads[k] = LITERALS[k];
    for (int k = 0; k < 3; k++) heads[L_COUNT + k] = REGEX_HEADS[k];
    for (size_t k = 0; k < sizeof(heads) / sizeof(heads[0]); k++)
        for (int a = 0; a < 256; a++)
            for (int b = 0; b < 256 && LOWER[a] == (unsigned char)heads[k][0]; b++)
                if (LOWER[b] == (unsigned char)heads[k][1]) {
                    unsigned char two[2] = {(unsigned char)a, (unsigned char)b};
                    uint16_t pair;
                    memcpy(&pair, two, 2); /* read back as the scan reads it */
                    PAIRS[pair] = 1;
                }
}

typedef struct {
    const unsigned char *s; /* the data as given: compared through LOWER */
    Py_ssize_t len;
    Py_ssize_t next_ok[P_COUNT];
} Scan;

static unsigned char low_at(const Scan *sc, Py_ssize_t i) { return LOWER[sc->s[i]]; }

/* A literal match at i (finditer: not before the end of its previous match). */
static int literal_at(Scan *sc, int which, Py_ssize_t i) {
    const char *tok = LITERALS[which];
    Py_ssize_t n = (Py_ssize_t)strlen(tok);
    if (i < sc->next_ok[which] || i + n > sc->len) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (low_at(sc, i + k) != (unsigned char)tok[k]) return 0;
    sc->next_ok[which] = i + n;
    return 1;
}

/* `arch(?<![a-z0-9]arch)(?:_|(?![a-z0-9.]))` and `cc(?<![a-z0-9]cc)(?:_|(?![a-z0-9.]))`:
 * the name (length n) not preceded by [a-z0-9]; then `_` (taken first, so the match ends past it)
 * or no [a-z0-9.] next (end of data included). */
static int name_at(Scan *sc, int which, const char *name, Py_ssize_t n, Py_ssize_t i) {
    Py_ssize_t after = i + n;
    if (i < sc->next_ok[which] || after > sc->len) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (low_at(sc, i + k) != (unsigned char)name[k]) return 0;
    if (i > 0 && is_lower_alnum(low_at(sc, i - 1))) return 0;
    if (after < sc->len && sc->s[after] == '_') {
        sc->next_ok[which] = after + 1;
        return 1;
    }
    if (after < sc->len && (is_lower_alnum(low_at(sc, after)) || sc->s[after] == '.')) return 0;
    sc->next_ok[which] = after;
    return 1;
}

/* `sm(?<![a-z0-9]sm)(?![a-z0-9_.])` (i: an `sm`) */
static int sm_name_at(Scan *sc, Py_ssize_t i) {
    if (i < sc->next_ok[R_SM_NAME]) return 0;
    if (i > 0 && is_lower_alnum(low_at(sc, i - 1))) return 0;
    if (i + 2 < sc->len) {
        unsigned char c = low_at(sc, i + 2);
        if (is_lower_alnum(c) || c == '_' || c == '.') return 0;
    }
    sc->next_ok[R_SM_NAME] = i + 2;
    return 1;
}

/* `sm_?\d\d` (i: an `sm`): `_?` is greedy and giving it back leaves `\d` facing that `_`, so the
 * `_` is taken exactly when present. */
static int sm_at(Scan *sc, Py_ssize_t i) {
    const unsigned char *s = sc->s;
    Py_ssize_t j = i + 2;
    if (i < sc->next_ok[R_SM]) return 0;
    if (j < sc->len && s[j] == '_') j++;
    if (j + 2 > sc->len || !is_digit(s[j]) || !is_digit(s[j + 1])) return 0;
    sc->next_ok[R_SM] = j + 2;
    return 1;
}

/* `sm_?\d{2,3}[af]?["']\s*:` (prefilter._SM_KEY_TAIL; i: an `sm`). Deterministic: `_` as above;
 * with d digits in a row only d in {2, 3} can match (fewer digits of a longer run leave a digit
 * facing `[af]?` and the quote); `[af]?` given back leaves a letter facing the quote; `\s*` given
 * back leaves a space facing `:`. */
static int sm_key_at(Scan *sc, Py_ssize_t i) {
    const unsigned char *s = sc->s;
    Py_ssize_t len = sc->len, j = i + 2, d = 0;
    if (i < sc->next_ok[R_SM_KEY]) return 0;
    if (j < len && s[j] == '_') j++;
    while (j + d < len && d < 4 && is_digit(s[j + d])) d++;
    if (d < 2 || d > 3) return 0;
    j += d;
    if (j < len && (LOWER[s[j]] == 'a' || LOWER[s[j]] == 'f')) j++;
    if (j >= len || (s[j] != '"' && s[j] != '\'')) return 0;
    j++;
    while (j < len && is_space(s[j])) j++;
    if (j >= len || s[j] != ':') return 0;
    sc->next_ok[R_SM_KEY] = j + 1;
    return 1;
}

/* `9: ` / `10: ` count only where a key starts (prefilter._is_key). */
static int starts_key(const unsigned char *s, Py_ssize_t i) {
    if (i == 0) return 1;
    unsigned char c = s[i - 1];
    return c == ' ' || c == '\t' || c == '{' || c == ',' || c == '\n';
}

/* chunks._code_hits: a hit counts when not inside a triple-quoted string and no `#` comes before
 * it on its line. Hits arrive in order, so the line is followed lazily: every byte is looked at
 * a bounded number of times, however many hits one long line holds. */
typedef struct {
    const unsigned char *s;
    const Quotes *quotes;
    Py_ssize_t done;       /* the line state below covers [0, done) */
    Py_ssize_t line_start; /* start of the line holding offset `done` */
    int hash;              /* a `#` in [line_start, done) */
    Offsets *out;
} Keep;

static int keep_hit(Keep *k, Py_ssize_t pos) {
    if (pos > k->done) {
        Py_ssize_t from = k->done, nl = pos - 1;
        while (nl >= from && k->s[nl] != '\n') nl--; /* the last newline before pos, if a new one */
        if (nl >= from) {
            k->line_start = nl + 1;
            k->hash = 0;
            from = nl + 1;
        }
        if (!k->hash) k->hash = memchr(k->s + from, '#', (size_t)(pos - from)) != NULL;
        k->done = pos;
    }
    if (k->hash || in_string(k->quotes, pos)) return 0;
    return offsets_push(k->out, pos);
}

/* prefilter.name_hit_counts: `major`, `arch`, `cc` and `sm` count only on a line that compares,
 * indexes or looks up, where a call starts at them, or after the `(` of an assignment's value.
 * Name hits arrive in order: the line's two answers are kept until a hit lies past it, and the
 * word run a call test crossed is remembered, so each byte is looked at a bounded number of times
 * (several hits in one word, `arch_arch_arch`, share one run). */
typedef struct {
    const unsigned char *s;
    Py_ssize_t len;
    Py_ssize_t line_start, line_end; /* the last line looked at: [line_start, line_end); end -1: none */
    int compares;                    /* rule 1 on that line */
    Py_ssize_t assigned_call;        /* rule 3: where the assignment's match ends on it, or -1 */
    Py_ssize_t word_from, word_end;  /* rule 2: [word_from, word_end) all `\w` ... */
    int word_call;                   /* ... and whether `\s*\(` follows word_end */
} Names;

static int is_word(unsigned char low) { return is_lower_alnum(low) || low == '_'; }

/* `[<>\[]|==|!=| in |\.get\(` searched in [a, b) of the lowercased data (`\Z` at b). */
static int compares_in(const unsigned char *s, Py_ssize_t a, Py_ssize_t b) {
    for (Py_ssize_t k = a; k < b; k++) {
        switch (s[k]) {
        case '<': case '>': case '[':
            return 1;
        case '=': case '!':
            if (k + 1 < b && s[k + 1] == '=') return 1;
            break;
        case ' ':
            if (k + 3 < b && LOWER[s[k + 1]] == 'i' && LOWER[s[k + 2]] == 'n' && s[k + 3] == ' ') return 1;
            break;
        case '.':
            if (k + 4 < b && LOWER[s[k + 1]] == 'g' && LOWER[s[k + 2]] == 'e' && LOWER[s[k + 3]] == 't' &&
                s[k + 4] == '(')
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

static int target_byte(unsigned char c) { return is_word(LOWER[c]) || c == '.'; }

/* Where `[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*(?::[^=\n]*)?=[^=\n][^\n(]*\(` matched at p
 * ends, or -1. Deterministic: the targets' runs are taken whole (a run given back leaves a `\w`
 * facing `,`, `:` or `=`; a `, x` group given back leaves `,` facing them); `[^=\n]*` stops at the
 * first `=` or newline and only `=` goes on; `[^\n(]*` stops at the first `(` or newline after the
 * value's first byte (which may itself be a `(`), and only `(` ends the match. */
static Py_ssize_t assigned_call_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t p) {
    while (p < len && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p >= len || !target_byte(s[p])) return -1;
    while (p < len && target_byte(s[p])) p++;
    for (;;) { /* (?:[ \t]*,[ \t]*[\w.]+)* */
        Py_ssize_t q = p;
        while (q < len && (s[q] == ' ' || s[q] == '\t')) q++;
        if (q >= len || s[q] != ',') break;
        q++;
        while (q < len && (s[q] == ' ' || s[q] == '\t')) q++;
        if (q >= len || !target_byte(s[q])) break;
        while (q < len && target_byte(s[q])) q++;
        p = q;
    }
    while (p < len && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p < len && s[p] == ':') { /* an annotation: up to the first `=` */
        p++;
        while (p < len && s[p] != '=' && s[p] != '\n') p++;
    }
    if (p >= len || s[p] != '=') return -1;
    p++;
    if (p >= len || s[p] == '=' || s[p] == '\n') return -1;
    p++;
    while (p < len && s[p] != '(' && s[p] != '\n') p++;
    return p < len && s[p] == '(' ? p + 1 : -1;
}

static int name_counts(Names *nm, Py_ssize_t i) {
    const unsigned char *s = nm->s;
    if (i >= nm->line_end) { /* a new line: its start is past the last one's newline */
        Py_ssize_t floor = nm->line_end < 0 ? 0 : nm->line_end + 1, k = i;
        while (k > floor && s[k - 1] != '\n') k--;
        const unsigned char *nl = memchr(s + i, '\n', (size_t)(nm->len - i));
        nm->line_start = k;
        nm->line_end = nl == NULL ? nm->len : nl - s;
        nm->compares = compares_in(s, nm->line_start, nm->line_end);
        nm->assigned_call = -2; /* not looked at yet */
    }
    if (nm->compares) return 1;
    if (!(i >= nm->word_from && i < nm->word_end)) { /* `\w*\s*\(` at i */
        Py_ssize_t j = i;
        while (j < nm->len && is_word(LOWER[s[j]])) j++;
        nm->word_from = i;
        nm->word_end = j;
        while (j < nm->len && is_space(s[j])) j++;
        nm->word_call = j < nm->len && s[j] == '(';
    }
    if (nm->word_call) return 1;
    if (nm->assigned_call == -2) nm->assigned_call = assigned_call_at(s, nm->len, nm->line_start);
    return nm->assigned_call >= 0 && nm->assigned_call <= i;
}

#define HIT(cond)                                        \
    do {                                                 \
        if ((cond) && keep_hit(&keep, i) < 0) goto fail; \
    } while (0)

static PyObject *cutscan_code_hits(PyObject *self, PyObject *args) {
    PyObject *data_obj, *quotes_obj, *result = NULL;
    Offsets out = {NULL, 0, 0};
    Quotes quotes;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O:code_hits", &PyBytes_Type, &data_obj, &quotes_obj)) return NULL;
    if (quotes_from_list(quotes_obj, &quotes) < 0) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    Scan sc;
    sc.s = s;
    sc.len = len;
    memset(sc.next_ok, 0, sizeof(sc.next_ok));
    Keep keep = {s, &quotes, 0, 0, 0, &out};
    Names names = {s, len, 0, -1, 0, -2, 0, 0, 0};
    /* hit_offsets sorts the hits of all patterns together: walking offsets in order and reporting
     * every pattern that matches at each gives that same sorted multiset (equal offsets are equal
     * ints, so their order among themselves is moot). A `"sm_90":` key is reported at its quote,
     * one before the offset it is found at: it goes first, after everything reported before. */
    for (Py_ssize_t i = 0; i + 1 < len; i++) {
        uint16_t pair;
        memcpy(&pair, s + i, 2);
        if (!PAIRS[pair]) continue;
        switch (LOWER[s[i]]) {
        case 'a':
            HIT(literal_at(&sc, L_APABILIT, i));
            HIT(literal_at(&sc, L_AMPERE, i));
            HIT(name_at(&sc, R_ARCH, "arch", 4, i) && name_counts(&names, i));
            break;
        case 'c':
            HIT(literal_at(&sc, L_CUDA_ARCH, i));
            HIT(literal_at(&sc, L_CAPAB, i));
            HIT(name_at(&sc, R_CC, "cc", 2, i) && name_counts(&names, i));
            break;
        case 'd':
            HIT(literal_at(&sc, L_DEVICE_SM, i));
            break;
        case 'g':
            HIT(literal_at(&sc, L_GENCODE, i));
            break;
        case 'h':
            HIT(literal_at(&sc, L_HOPPER, i));
            break;
        case 'l':
            HIT(literal_at(&sc, L_LACKWELL, i));
            break;
        case 'm':
            HIT(literal_at(&sc, L_MAJOR, i) && name_counts(&names, i));
            break;
        case 'r':
            HIT(literal_at(&sc, L_RCH_LIST, i));
            break;
        case 's': /* the pair is `sm` */
            if (sm_key_at(&sc, i) && i > 0 && (s[i - 1] == '"' || s[i - 1] == '\'')) {
                if (keep_hit(&keep, i - 1) < 0) goto fail;
            }
            HIT(literal_at(&sc, L_SM_VERSION, i));
            HIT(sm_at(&sc, i));
            HIT(sm_name_at(&sc, i) && name_counts(&names, i));
            break;
        case '9':
            HIT(literal_at(&sc, L_KEY9, i) && starts_key(s, i));
            break;
        case '1':
            HIT(literal_at(&sc, L_KEY10, i) && starts_key(s, i));
            break;
        case '.':
            HIT(literal_at(&sc, L_DQ0, i));
            HIT(literal_at(&sc, L_SQ0, i));
            break;
        case ',':
            HIT(literal_at(&sc, L_TUPLE0, i));
            break;
        default:
            break;
        }
    }
    result = offsets_to_list(&out);
fail:
    PyMem_Free(quotes.items);
    PyMem_Free(out.items);
    return result;
}

/* ---- starts: chunks._starts ---- */

static const char *const CONTINUATIONS[] = {"else", "elif", "except", "finally", "case"};

/* The tail of chunks._start_pattern after `\n` + indent, at offset q of data cut at `stop`:
 * `(?=[^ \t\r\n#)\]}])(?!(?:else|elif|except|finally|case)(?:[ :(\r\n]|\Z))`, `\Z` being `stop`. */
static int statement_at(const unsigned char *s, Py_ssize_t q, Py_ssize_t stop) {
    if (q >= stop) return 0;
    switch (s[q]) {
    case ' ': case '\t': case '\r': case '\n': case '#': case ')': case ']': case '}':
        return 0;
    default:
        break;
    }
    for (size_t k = 0; k < sizeof(CONTINUATIONS) / sizeof(CONTINUATIONS[0]); k++) {
        Py_ssize_t n = (Py_ssize_t)strlen(CONTINUATIONS[k]);
        if (q + n > stop || memcmp(s + q, CONTINUATIONS[k], (size_t)n) != 0) continue;
        if (q + n == stop) return 0;
        switch (s[q + n]) {
        case ' ': case ':': case '(': case '\r': case '\n':
            return 0;
        default:
            break;
        }
    }
    return 1;
}

static PyObject *cutscan_starts(PyObject *self, PyObject *args) {
    PyObject *data_obj, *indent_obj, *quotes_obj, *result = NULL;
    Py_ssize_t begin, end;
    Offsets found = {NULL, 0, 0}, out = {NULL, 0, 0};
    Quotes quotes;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!nnO:starts", &PyBytes_Type, &data_obj, &PyBytes_Type, &indent_obj, &begin,
                          &end, &quotes_obj))
        return NULL;
    if (quotes_from_list(quotes_obj, &quotes) < 0) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    const char *indent = PyBytes_AS_STRING(indent_obj);
    Py_ssize_t n = PyBytes_GET_SIZE(indent_obj);

    /* pattern.match(b"\n" + data[: n + 16]) and m.end() <= end + 1: the slice's end is `\Z`. */
    if (begin == 0 && n <= end && n <= len && memcmp(s, indent, (size_t)n) == 0) {
        Py_ssize_t stop = len < n + 16 ? len : n + 16;
        if (statement_at(s, n, stop) && offsets_push(&found, 0) < 0) goto fail;
    }
    /* pattern.finditer(data, max(begin - 1, 0), end): positions clamped as re clamps them, and the
     * data read as if it ended at `end`. */
    Py_ssize_t pos = begin > 0 ? begin - 1 : 0, stop = end;
    if (pos > len) pos = len;
    if (stop < 0) stop = 0;
    if (stop > len) stop = len;
    Py_ssize_t next_ok = pos;
    while (pos < stop) {
        const unsigned char *nl = memchr(s + pos, '\n', (size_t)(stop - pos));
        if (nl == NULL) break;
        Py_ssize_t p = nl - s;
        pos = p + 1;
        if (p < next_ok || p + 1 + n > stop || memcmp(s + p + 1, indent, (size_t)n) != 0) continue;
        if (!statement_at(s, p + 1 + n, stop)) continue;
        if (offsets_push(&found, p + 1) < 0) goto fail;
        next_ok = p + 1 + n; /* the match's end: finditer resumes there */
    }

    int decorated = 0;
    for (Py_ssize_t k = 0; k < found.len; k++) {
        Py_ssize_t at_pos = found.items[k];
        if (in_string(&quotes, at_pos)) continue; /* inside a triple-quoted string */
        int at = at_pos + n < len && s[at_pos + n] == '@';
        if (decorated) { /* the decorated def belongs to its decorator's statement */
            decorated = at;
            continue;
        }
        decorated = at;
        if (offsets_push(&out, at_pos) < 0) goto fail;
    }
    result = offsets_to_list(&out);
fail:
    PyMem_Free(quotes.items);
    PyMem_Free(found.items);
    PyMem_Free(out.items);
    return result;
}

/* ---- relevance: (prefilter.worth_parsing(data), any(tok in data for tok in builds.BUILD_TOKENS)) ---- */

/* Pairs of raw bytes (read as a 16-bit load) that can begin a relevance token: the lowercased
 * CAP_TOKENS, CC_KEY_TOKENS and `sm`, and the case-sensitive BUILD_TOKENS. */
static unsigned char REL_PAIRS[65536];
static const char *const CAP_LITERALS[] = {
    "apabilit", "lackwell", "hopper", "device_sm", "rch_list", "cuda_arch", "sm_version", "gencode",
    ".0\": ", ".0': ", ", 0): ", /* the CC_KEY_TOKENS that are keys wherever they are */
};
static const char *const BUILD_LITERALS[] = {"ARCH_LIST", "gencode", "ARCHITECTURES", "cuda_archs", "CUDA_ARCHS",
                                             "generate-code"};
#define N_CAP (sizeof(CAP_LITERALS) / sizeof(CAP_LITERALS[0]))
#define N_BUILD (sizeof(BUILD_LITERALS) / sizeof(BUILD_LITERALS[0]))

static void mark_pair(unsigned char *table, unsigned char a, unsigned char b) {
    unsigned char two[2] = {a, b};
    uint16_t pair;
    memcpy(&pair, two, 2); /* read back as the scan reads it */
    table[pair] = 1;
}

static int raw_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i, const char *tok) {
    Py_ssize_t n = (Py_ssize_t)strlen(tok);
    return i + n <= len && memcmp(s + i, tok, (size_t)n) == 0;
}

/* A build token at i: case-sensitive, on the raw bytes. */
static int build_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i) {
    switch (s[i]) {
    case 'A':
        return raw_at(s, len, i, "ARCH_LIST") || raw_at(s, len, i, "ARCHITECTURES");
    case 'g':
        return raw_at(s, len, i, "gencode") || raw_at(s, len, i, "generate-code");
    case 'c':
        return raw_at(s, len, i, "cuda_archs");
    case 'C':
        return raw_at(s, len, i, "CUDA_ARCHS");
    default:
        return 0;
    }
}

/* BUILD_INNER[pair]: bit o set when some build token holds that pair of bytes at offset o < BUILD_MIN - 1.
 * BUILD_MIN: the length of the shortest build token (`gencode`). */
#define BUILD_MIN 7
static unsigned char BUILD_INNER[65536];

static void init_relevance_tables(void) {
    const char *folded[N_CAP + 3];
    for (size_t k = 0; k < N_CAP; k++) folded[k] = CAP_LITERALS[k];
    folded[N_CAP] = "9: ";
    folded[N_CAP + 1] = "10: ";
    folded[N_CAP + 2] = "sm";
    for (size_t k = 0; k < N_CAP + 3; k++)
        for (int a = 0; a < 256; a++)
            for (int b = 0; b < 256 && LOWER[a] == (unsigned char)folded[k][0]; b++)
                if (LOWER[b] == (unsigned char)folded[k][1]) mark_pair(REL_PAIRS, (unsigned char)a, (unsigned char)b);
    for (size_t k = 0; k < N_BUILD; k++) {
        const unsigned char *tok = (const unsigned char *)BUILD_LITERALS[k];
        mark_pair(REL_PAIRS, tok[0], tok[1]);
        for (int o = 0; o < BUILD_MIN - 1; o++) {
            unsigned char two[2] = {tok[o], tok[o + 1]};
            uint16_t pair;
            memcpy(&pair, two, 2);
            BUILD_INNER[pair] |= (unsigned char)(1u << o);
        }
    }
}

/* `tok` (lowercase) at i of the lowercased data. */
static int folded_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i, const char *tok) {
    Py_ssize_t n = (Py_ssize_t)strlen(tok);
    if (i + n > len) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (LOWER[s[i + k]] != (unsigned char)tok[k]) return 0;
    return 1;
}

/* A match of `sm_?\d{2,3}[af]?["']\s*:` at i (an `sm`), as sm_key_at decides it (no resume point:
 * a match holds no `s` past its first byte, so matches at different `sm` never overlap and
 * finditer reports every offset where the pattern matches). */
static int sm_key_here(const unsigned char *s, Py_ssize_t len, Py_ssize_t i) {
    Scan sc;
    sc.s = s;
    sc.len = len;
    sc.next_ok[R_SM_KEY] = 0;
    return sm_key_at(&sc, i);
}

static PyObject *cutscan_relevance(PyObject *self, PyObject *args) {
    PyObject *data_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!:relevance", &PyBytes_Type, &data_obj)) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    int worth = 0, build = 0;
    /* has_cc_key looks at the first 64 occurrences of `9: ` and of `10: ` only (each token gives up
     * after that many that are not keys); `"sm90":`-style keys count only where `sm_` occurs too. */
    int tries9 = 0, tries10 = 0, sm_underscore = 0, quoted_sm_key = 0;
    Py_ssize_t i = 0;
    for (; i + 1 < len; i++) {
        uint16_t pair;
        memcpy(&pair, s + i, 2);
        if (!REL_PAIRS[pair]) continue;
        if (!build) build = build_at(s, len, i);
        if (worth) break; /* the rest looks for a build token only: faster below */
        switch (LOWER[s[i]]) { /* on the lowercased bytes */
        case 'a':
            worth = folded_at(s, len, i, "apabilit");
            break;
        case 'l':
            worth = folded_at(s, len, i, "lackwell");
            break;
        case 'h':
            worth = folded_at(s, len, i, "hopper");
            break;
        case 'd':
            worth = folded_at(s, len, i, "device_sm");
            break;
        case 'r':
            worth = folded_at(s, len, i, "rch_list");
            break;
        case 'c':
            worth = folded_at(s, len, i, "cuda_arch");
            break;
        case 'g':
            worth = folded_at(s, len, i, "gencode");
            break;
        case '.':
            worth = folded_at(s, len, i, ".0\": ") || folded_at(s, len, i, ".0': ");
            break;
        case ',':
            worth = folded_at(s, len, i, ", 0): ");
            break;
        case '9':
            worth = folded_at(s, len, i, "9: ") && tries9++ < 64 && starts_key(s, i);
            break;
        case '1':
            worth = folded_at(s, len, i, "10: ") && tries10++ < 64 && starts_key(s, i);
            break;
        case 's': /* `sm_version`, `sm_?\d\d`, and the `sm` of a quoted key */
            if (LOWER[s[i + 1]] != 'm') break;
            if (i + 2 < len && s[i + 2] == '_') sm_underscore = 1;
            {
                Py_ssize_t j = i + 2;
                if (j < len && s[j] == '_') j++;
                if (j + 2 <= len && is_digit(s[j]) && is_digit(s[j + 1])) worth = 1;
            }
            if (i > 0 && (s[i - 1] == '"' || s[i - 1] == '\'') && sm_key_here(s, len, i)) quoted_sm_key = 1;
            worth = worth || folded_at(s, len, i, "sm_version") || (sm_underscore && quoted_sm_key);
            break;
        default:
            break;
        }
        if (worth && build) break;
    }
    /* Every build token is at least BUILD_MIN bytes long, so one of every BUILD_MIN - 1 pair starts
     * in a row lies inside each occurrence, at an offset below BUILD_MIN - 1: only those pairs are
     * looked up, and a pair found names the offsets where an occurrence would start. (Occurrences
     * starting before i were looked for above; looking again is harmless.) */
    for (Py_ssize_t j = i; !build && j + 1 < len; j += BUILD_MIN - 1) {
        uint16_t pair;
        memcpy(&pair, s + j, 2);
        for (unsigned offsets = BUILD_INNER[pair]; offsets && !build; offsets &= offsets - 1) {
            Py_ssize_t at = j - __builtin_ctz(offsets);
            build = at >= 0 && build_at(s, len, at);
        }
    }
    return Py_BuildValue("(OO)", worth ? Py_True : Py_False, build ? Py_True : Py_False);
}

/* ---- hint_lines: hintlines.HintLines(text.splitlines(), hints) over the bytes of ASCII text ---- */

/* str.splitlines() breaks of ASCII text (`\r\n` is one break) */
static int is_break(unsigned char c) {
    return c == '\n' || c == '\r' || c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1e);
}

#define MAX_HINTS 63
#define BREAK_BIT ((uint64_t)1 << 63)

static int all_ascii(const unsigned char *s, Py_ssize_t len) {
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) return 0;
    }
    for (; i < len; i++)
        if (s[i] >= 0x80) return 0;
    return 1;
}

static PyObject *cutscan_hint_lines(PyObject *self, PyObject *args) {
    PyObject *data_obj, *hints_obj, *result = NULL;
    Offsets out = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!:hint_lines", &PyBytes_Type, &data_obj, &PyTuple_Type, &hints_obj)) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    Py_ssize_t n_hints = PyTuple_GET_SIZE(hints_obj);
    const unsigned char *hint[MAX_HINTS];
    Py_ssize_t hint_len[MAX_HINTS];
    /* Indexed by a raw byte: FIRST, the hints whose first byte is its lowercase (and BREAK_BIT for
     * a line break); SECOND, those whose second byte is its lowercase, every one-byte hint, and
     * BREAK_BIT. SECOND[256] (past the end) holds the one-byte hints and BREAK_BIT. FIRST of a byte
     * AND SECOND of the next leaves the hints that can start there, or a line break: most bytes
     * are passed over with two look-ups and one well-predicted branch. */
    uint64_t first[256], second[257];
    for (Py_ssize_t h = 0; h < n_hints; h++)
        if (!PyBytes_Check(PyTuple_GET_ITEM(hints_obj, h))) {
            PyErr_SetString(PyExc_TypeError, "hints must be a tuple of bytes");
            return NULL;
        }
    if (n_hints > MAX_HINTS) Py_RETURN_NONE;
    for (int c = 0; c < 256; c++) first[c] = is_break((unsigned char)c) ? BREAK_BIT : 0;
    for (int c = 0; c < 257; c++) second[c] = BREAK_BIT;
    for (Py_ssize_t h = 0; h < n_hints; h++) {
        PyObject *item = PyTuple_GET_ITEM(hints_obj, h);
        hint[h] = (const unsigned char *)PyBytes_AS_STRING(item);
        hint_len[h] = PyBytes_GET_SIZE(item);
        /* Only hints the line-wise search answers as the joined text does: not empty (that matches
         * where no line is), ASCII, and no line break inside (that could span lines there). */
        if (hint_len[h] == 0) Py_RETURN_NONE;
        for (Py_ssize_t k = 0; k < hint_len[h]; k++)
            if (hint[h][k] >= 0x80 || is_break(hint[h][k])) Py_RETURN_NONE;
        uint64_t bit = (uint64_t)1 << h;
        for (int c = 0; c < 256; c++) {
            if (LOWER[c] == hint[h][0]) first[c] |= bit;
            if (hint_len[h] == 1 || LOWER[c] == hint[h][1]) second[c] |= bit;
        }
        if (hint_len[h] == 1) second[256] |= bit;
    }
    if (!all_ascii(s, len)) Py_RETURN_NONE; /* str.lower() of other text can change letters and lengths */
    Py_ssize_t line = 0, i = 0;
    while (i < len) {
        uint64_t cand = first[s[i]] & second[i + 1 < len ? s[i + 1] : 256];
        if (!cand) {
            i++;
            continue;
        }
        if (cand & BREAK_BIT) {
            i += s[i] == '\r' && i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
            line++;
            continue;
        }
        int hit = 0;
        while (cand && !hit) {
            int h = __builtin_ctzll(cand);
            cand &= cand - 1;
            if (i + hint_len[h] <= len) {
                Py_ssize_t k = 0;
                while (k < hint_len[h] && LOWER[s[i + k]] == hint[h][k]) k++;
                hit = k == hint_len[h];
            }
        }
        if (!hit) {
            i++;
            continue;
        }
        if (offsets_push(&out, line) < 0) goto fail;
        while (i < len && !(first[s[i]] & BREAK_BIT)) i++; /* the rest of a line already found */
    }
    result = offsets_to_list(&out);
fail:
    PyMem_Free(out.items);
    return result;
}

static PyMethodDef cutscan_methods[] = {
    {"quotes", cutscan_quotes, METH_VARARGS, "Sorted offsets of the triple quotes (\"\"\" and ''') in data."},
    {"code_hits", cutscan_code_hits, METH_VARARGS,
     "chunks._code_hits(data, prefilter.hit_offsets(data, names=True), quotes)."},
    {"starts", cutscan_starts, METH_VARARGS, "chunks._starts(data, indent, begin, end, quotes)."},
    {"relevance", cutscan_relevance, METH_VARARGS,
     "(prefilter.worth_parsing(data), any(tok in data for tok in builds.BUILD_TOKENS))."},
    {"hint_lines", cutscan_hint_lines, METH_VARARGS,
     "hintlines.HintLines(data.decode().splitlines(), hints) lines for ASCII data; None for other data."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cutscan_module = {
    PyModuleDef_HEAD_INIT, "capgap.scan._cutscan",
    "C byte scans of the statement cut, the relevance test and hint lines.", -1, cutscan_methods,
    NULL, NULL, NULL, NULL,
};

/* Bumped with every change of what the scans return: chunks.py ignores a build of older source
 * (an editable install does not rebuild by itself). */
#define CUTSCAN_VERSION 3

PyMODINIT_FUNC PyInit__cutscan(void) {
    init_tables();
    init_relevance_tables();
    PyObject *module = PyModule_Create(&cutscan_module);
    if (module != NULL && PyModule_AddIntConstant(module, "VERSION", CUTSCAN_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
