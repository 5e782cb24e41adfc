/* Byte scans of the statement cut (capgap.reading.chunks), of the relevance test of a file
 * (capgap.reading.fileparse.relevance) and of the lines holding a hint (capgap.reading.hintlines), done
 * in one C pass each; and the whole statement cut (chunks.select) built on them.
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
static int scan_quotes(const unsigned char *s, Py_ssize_t len, Offsets *out) {
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
                if (offsets_push(out, k) < 0) return -1;
                next_ok[kind] = k + 3;
            }
        }
    }
    return 0;
}

static PyObject *cutscan_quotes(PyObject *self, PyObject *args) {
    PyObject *data_obj, *result = NULL;
    Offsets out = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!:quotes", &PyBytes_Type, &data_obj)) return NULL;
    if (scan_quotes((const unsigned char *)PyBytes_AS_STRING(data_obj), PyBytes_GET_SIZE(data_obj), &out) == 0)
        result = offsets_to_list(&out);
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

/* data.startswith(lit, p) */
static int lit_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t p, const char *lit) {
    Py_ssize_t n = (Py_ssize_t)strlen(lit);
    return p >= 0 && p <= len - n && memcmp(s + p, lit, (size_t)n) == 0;
}

/* Literal patterns: the CAP_TOKENS, the CC_KEY_TOKENS and the plain name tokens. */
enum {
    L_APABILIT, L_LACKWELL, L_HOPPER, L_DEVICE_SM, L_RCH_LIST, L_CUDA_ARCH, L_SM_VERSION, L_GENCODE,
    L_KEY9, L_KEY10, L_DQ0, L_SQ0, L_TUPLE0, L_KEY90, L_KEY100,
    L_MAJOR, L_AMPERE, L_CAPAB,
    L_COUNT
};
static const char *const LITERALS[L_COUNT] = {
    "apabilit", "lackwell", "hopper", "device_sm", "rch_list", "cuda_arch", "sm_version", "gencode",
    "9: ", "10: ", ".0\": ", ".0': ", ", 0): ", "90: ", "100: ",
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

/* `tok` (lowercase) at i of the lowercased data. */
static int folded_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i, const char *tok) {
    Py_ssize_t n = (Py_ssize_t)strlen(tok);
    if (i + n > len) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (LOWER[s[i + k]] != (unsigned char)tok[k]) return 0;
    return 1;
}

/* A literal match at i (finditer: not before the end of its previous match). */
static int literal_at(Scan *sc, int which, Py_ssize_t i) {
    const char *tok = LITERALS[which];
    if (i < sc->next_ok[which] || !folded_at(sc->s, sc->len, i, tok)) return 0;
    sc->next_ok[which] = i + (Py_ssize_t)strlen(tok);
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

static int scan_code_hits(const unsigned char *s, Py_ssize_t len, const Quotes *quotes, Offsets *out) {
    Scan sc;
    sc.s = s;
    sc.len = len;
    memset(sc.next_ok, 0, sizeof(sc.next_ok));
    Keep keep = {s, quotes, 0, 0, 0, out};
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
            HIT(literal_at(&sc, L_KEY90, i) && starts_key(s, i));
            break;
        case '1':
            HIT(literal_at(&sc, L_KEY10, i) && starts_key(s, i));
            HIT(literal_at(&sc, L_KEY100, i) && starts_key(s, i));
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
    return 0;
fail:
    return -1;
}

static PyObject *cutscan_code_hits(PyObject *self, PyObject *args) {
    PyObject *data_obj, *quotes_obj, *result = NULL;
    Offsets out = {NULL, 0, 0};
    Quotes quotes;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O:code_hits", &PyBytes_Type, &data_obj, &quotes_obj)) return NULL;
    if (quotes_from_list(quotes_obj, &quotes) < 0) return NULL;
    if (scan_code_hits((const unsigned char *)PyBytes_AS_STRING(data_obj), PyBytes_GET_SIZE(data_obj), &quotes,
                       &out) == 0)
        result = offsets_to_list(&out);
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

static int scan_starts(const unsigned char *s, Py_ssize_t len, const unsigned char *indent, Py_ssize_t n,
                       Py_ssize_t begin, Py_ssize_t end, const Quotes *quotes, Offsets *out) {
    Offsets found = {NULL, 0, 0};
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
        if (in_string(quotes, at_pos)) continue; /* inside a triple-quoted string */
        int at = at_pos + n < len && s[at_pos + n] == '@';
        if (decorated) { /* the decorated def belongs to its decorator's statement */
            decorated = at;
            continue;
        }
        decorated = at;
        if (offsets_push(out, at_pos) < 0) goto fail;
    }
    PyMem_Free(found.items);
    return 0;
fail:
    PyMem_Free(found.items);
    return -1;
}

static PyObject *cutscan_starts(PyObject *self, PyObject *args) {
    PyObject *data_obj, *indent_obj, *quotes_obj, *result = NULL;
    Py_ssize_t begin, end;
    Offsets out = {NULL, 0, 0};
    Quotes quotes;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!nnO:starts", &PyBytes_Type, &data_obj, &PyBytes_Type, &indent_obj, &begin,
                          &end, &quotes_obj))
        return NULL;
    if (quotes_from_list(quotes_obj, &quotes) < 0) return NULL;
    if (scan_starts((const unsigned char *)PyBytes_AS_STRING(data_obj), PyBytes_GET_SIZE(data_obj),
                    (const unsigned char *)PyBytes_AS_STRING(indent_obj), PyBytes_GET_SIZE(indent_obj), begin, end,
                    &quotes, &out) == 0)
        result = offsets_to_list(&out);
    PyMem_Free(quotes.items);
    PyMem_Free(out.items);
    return result;
}

/* ---- relevance: (prefilter.worth_parsing(data), any(tok in data for tok in builds.BUILD_TOKENS)) ---- */

/* Pairs of raw bytes (read as a 16-bit load) that can begin a relevance token: the lowercased
 * CAP_TOKENS, CC_KEY_TOKENS and `sm`, and the case-sensitive BUILD_TOKENS. */
static unsigned char REL_PAIRS[65536];
static const char *const BUILD_LITERALS[] = {"ARCH_LIST", "gencode", "ARCHITECTURES", "cuda_archs", "CUDA_ARCHS",
                                             "generate-code"};
#define N_BUILD (sizeof(BUILD_LITERALS) / sizeof(BUILD_LITERALS[0]))

static void mark_pair(unsigned char *table, unsigned char a, unsigned char b) {
    unsigned char two[2] = {a, b};
    uint16_t pair;
    memcpy(&pair, two, 2); /* read back as the scan reads it */
    table[pair] = 1;
}

/* A build token at i: case-sensitive, on the raw bytes. */
static int build_at(const unsigned char *s, Py_ssize_t len, Py_ssize_t i) {
    switch (s[i]) {
    case 'A':
        return lit_at(s, len, i, "ARCH_LIST") || lit_at(s, len, i, "ARCHITECTURES");
    case 'g':
        return lit_at(s, len, i, "gencode") || lit_at(s, len, i, "generate-code");
    case 'c':
        return lit_at(s, len, i, "cuda_archs");
    case 'C':
        return lit_at(s, len, i, "CUDA_ARCHS");
    default:
        return 0;
    }
}

/* BUILD_INNER[pair]: bit o set when some build token holds that pair of bytes at offset o < BUILD_MIN - 1.
 * BUILD_MIN: the length of the shortest build token (`gencode`). */
#define BUILD_MIN 7
static unsigned char BUILD_INNER[65536];

static void init_relevance_tables(void) {
    const char *folded[L_MAJOR + 1]; /* the CAP_TOKENS and CC_KEY_TOKENS (LITERALS before the names), and `sm` */
    for (int k = 0; k < L_MAJOR; k++) folded[k] = LITERALS[k];
    folded[L_MAJOR] = "sm";
    for (int k = 0; k <= L_MAJOR; k++)
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
    int tries9 = 0, tries10 = 0, tries90 = 0, tries100 = 0, sm_underscore = 0, quoted_sm_key = 0;
    Py_ssize_t i = 0;
    for (; i + 1 < len; i++) {
        uint16_t pair;
        memcpy(&pair, s + i, 2);
        if (!REL_PAIRS[pair]) continue;
        if (!build) build = build_at(s, len, i);
        if (worth) break; /* the rest looks for a build token only: faster below */
        switch (LOWER[s[i]]) { /* on the lowercased bytes */
        case 'a':
            worth = folded_at(s, len, i, LITERALS[L_APABILIT]);
            break;
        case 'l':
            worth = folded_at(s, len, i, LITERALS[L_LACKWELL]);
            break;
        case 'h':
            worth = folded_at(s, len, i, LITERALS[L_HOPPER]);
            break;
        case 'd':
            worth = folded_at(s, len, i, LITERALS[L_DEVICE_SM]);
            break;
        case 'r':
            worth = folded_at(s, len, i, LITERALS[L_RCH_LIST]);
            break;
        case 'c':
            worth = folded_at(s, len, i, LITERALS[L_CUDA_ARCH]);
            break;
        case 'g':
            worth = folded_at(s, len, i, LITERALS[L_GENCODE]);
            break;
        case '.':
            worth = folded_at(s, len, i, LITERALS[L_DQ0]) || folded_at(s, len, i, LITERALS[L_SQ0]);
            break;
        case ',':
            worth = folded_at(s, len, i, LITERALS[L_TUPLE0]);
            break;
        case '9':
            worth = folded_at(s, len, i, LITERALS[L_KEY9]) && tries9++ < 64 && starts_key(s, i);
            worth = worth || (folded_at(s, len, i, LITERALS[L_KEY90]) && tries90++ < 64 && starts_key(s, i));
            break;
        case '1':
            worth = folded_at(s, len, i, LITERALS[L_KEY10]) && tries10++ < 64 && starts_key(s, i);
            worth = worth || (folded_at(s, len, i, LITERALS[L_KEY100]) && tries100++ < 64 && starts_key(s, i));
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
            worth = worth || folded_at(s, len, i, LITERALS[L_SM_VERSION]) || (sm_underscore && quoted_sm_key);
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

/* ---- select: chunks.select, the whole statement cut ----
 *
 * The same walk as the Python reference, statement by statement. Each regex of chunks.py is
 * replayed as "the leftmost match in [pos, end)" with re's bounds: `^`, `\b` and look-behinds see
 * the bytes before pos, `$`, `\b` and look-aheads see `end` as the end of the data. Where the
 * reference raises (a class header found but no `class` line, or a nesting deeper than MAX_DEPTH,
 * where Python's own recursion limit could decide), select answers None and the caller runs the
 * reference. */

#define MAX_DEPTH 100
#define BIG_CLASS_LINES 40
#define BIG_DEF_LINES 30
#define BIG_BLOCK_LINES 12
#define WHOLE_DEF_LINES 400 /* chunks._WHOLE_DEF_LINES */

/* bytes-regex `\w`: ASCII letters, digits and `_` */
static int re_word(unsigned char c) { return is_word(LOWER[c]); }
static int blank(unsigned char c) { return c == ' ' || c == '\t'; }
/* `\b` right after a word byte at p, the data ending at `end` */
static int boundary_after(const unsigned char *s, Py_ssize_t p, Py_ssize_t end) { return p >= end || !re_word(s[p]); }
/* `lit\b` at p, the data ending at `end` */
static int keyword_at(const unsigned char *s, Py_ssize_t end, Py_ssize_t p, const char *lit) {
    return lit_at(s, end, p, lit) && boundary_after(s, p + (Py_ssize_t)strlen(lit), end);
}
static int line_start(const unsigned char *s, Py_ssize_t p) { return p == 0 || s[p - 1] == '\n'; }
static Py_ssize_t clamp(Py_ssize_t v, Py_ssize_t len) { return v < 0 ? 0 : v > len ? len : v; }
/* the end of the line holding p, the data ending at `end` */
static Py_ssize_t line_end(const unsigned char *s, Py_ssize_t p, Py_ssize_t end) {
    const unsigned char *nl = p < end ? memchr(s + p, '\n', (size_t)(end - p)) : NULL;
    return nl == NULL ? end : nl - s;
}
/* the first line start at or after p (`^` of re.M), or past `end` */
static Py_ssize_t next_line_start(const unsigned char *s, Py_ssize_t p, Py_ssize_t end) {
    if (line_start(s, p)) return p;
    Py_ssize_t e = line_end(s, p, end);
    return e < end ? e + 1 : end + 1;
}

/* A `:` in [from, e) followed by `[ \t]*(#[^\n]*)?$`, e the line's end ($): the last one, or -1. */
static Py_ssize_t last_header_colon(const unsigned char *s, Py_ssize_t from, Py_ssize_t e) {
    Py_ssize_t last = -1;
    for (Py_ssize_t c = from; c < e; c++) {
        if (s[c] != ':') continue;
        Py_ssize_t k = c + 1;
        while (k < e && blank(s[k])) k++;
        if (k == e || s[k] == '#') last = c;
    }
    return last;
}

/* _CLASS_HEADER.search(data, a, b).end(), or -1. Both branches start at a line start and end at
 * its line's end (`[^\n]*` stops there, and `$` holds only there); they differ in what leads. */
static Py_ssize_t class_header_end(const unsigned char *s, Py_ssize_t len, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t end = clamp(b, len);
    for (Py_ssize_t p = next_line_start(s, clamp(a, len), end); p < end;) {
        Py_ssize_t e = line_end(s, p, end), q = p;
        while (q < e && blank(s[q])) q++;
        if (keyword_at(s, end, q, "class") && last_header_colon(s, q + 5, e) >= 0) return e;
        if (q < e && s[q] == ')' && last_header_colon(s, q + 1, e) >= 0) return e;
        if (e >= end) break;
        p = e + 1;
    }
    return -1;
}

/* `^[ \t]*(?:async[ \t]+)?` + `def\b` (is_def) or `(?:def|class)\b` at line start p: where the
 * keyword starts, or -1. Deterministic: blanks given back face a keyword letter. */
static Py_ssize_t def_line_at(const unsigned char *s, Py_ssize_t end, Py_ssize_t p, int is_def) {
    Py_ssize_t q = p;
    while (q < end && blank(s[q])) q++;
    if (lit_at(s, end, q, "async") && q + 5 < end && blank(s[q + 5])) {
        q += 5;
        while (q < end && blank(s[q])) q++;
    }
    if (keyword_at(s, end, q, "def") || (!is_def && keyword_at(s, end, q, "class"))) return q;
    return -1;
}

/* _DEF_HEADER.search(data, a, b).end(), or -1: a line holding `)` before a header colon, or a
 * `def` line whose first `(` is followed by a `)` and then by a `:` that only blanks follow. */
static Py_ssize_t def_header_end(const unsigned char *s, Py_ssize_t len, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t end = clamp(b, len);
    for (Py_ssize_t p = clamp(a, len); p < end;) {
        Py_ssize_t e = line_end(s, p, end);
        const unsigned char *paren = memchr(s + p, ')', (size_t)(e - p));
        if (paren != NULL && paren - s < last_header_colon(s, p, e)) return e;
        Py_ssize_t q = line_start(s, p) ? def_line_at(s, end, p, 1) : -1;
        if (q >= 0) {
            Py_ssize_t k = q + 3;
            while (k < e && s[k] != '(') k++;
            if (k < e) { /* `[^\n(]*` stops at the first `(` */
                Py_ssize_t t = e;
                while (t > k + 1 && blank(s[t - 1])) t--;
                Py_ssize_t c = t - 1;
                if (c >= k + 2 && s[c] == ':' && memchr(s + k + 1, ')', (size_t)(c - k - 1)) != NULL) return e;
            }
        }
        if (e >= end) break;
        p = e + 1;
    }
    return -1;
}

/* _BODY.search(data, pos, end): `^([ \t]+)[^ \t\r\n#]`; 1 with its start and the group's end. */
static int body_search(const unsigned char *s, Py_ssize_t len, Py_ssize_t pos, Py_ssize_t b, Py_ssize_t *start,
                       Py_ssize_t *indent_end) {
    Py_ssize_t end = clamp(b, len);
    for (Py_ssize_t p = next_line_start(s, clamp(pos, len), end); p < end;) {
        Py_ssize_t q = p;
        while (q < end && blank(s[q])) q++;
        if (q > p && q < end && s[q] != '\r' && s[q] != '\n' && s[q] != '#') {
            *start = p;
            *indent_end = q;
            return 1;
        }
        Py_ssize_t e = line_end(s, q, end);
        if (e >= end) break;
        p = e + 1;
    }
    return 0;
}

/* _KEYWORD_LINE.search(data, a, b).start(), or -1 */
static Py_ssize_t keyword_line(const unsigned char *s, Py_ssize_t len, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t end = clamp(b, len);
    for (Py_ssize_t p = next_line_start(s, clamp(a, len), end); p < end;) {
        if (def_line_at(s, end, p, 0) >= 0) return p;
        Py_ssize_t e = line_end(s, p, end);
        if (e >= end) break;
        p = e + 1;
    }
    return -1;
}

/* _DEF_START.match(data, p): `(?:@[^\n]*\n[ \t]*)*(?:async[ \t]+)?def\b`. A decorator line given
 * back leaves `@` facing `async`/`def`, so each is taken whole. */
static int def_start(const unsigned char *s, Py_ssize_t len, Py_ssize_t p) {
    if (p < 0 || p > len) return 0;
    while (p < len && s[p] == '@') {
        Py_ssize_t e = line_end(s, p, len);
        if (e >= len) return 0;
        p = e + 1;
        while (p < len && blank(s[p])) p++;
    }
    if (lit_at(s, len, p, "async") && p + 5 < len && blank(s[p + 5])) {
        p += 5;
        while (p < len && blank(s[p])) p++;
    }
    return keyword_at(s, len, p, "def");
}

/* _BLOCK_START.match(data, p) */
static int block_start(const unsigned char *s, Py_ssize_t len, Py_ssize_t p) {
    static const char *const words[] = {"if", "while", "for", "with", "try"};
    if (p < 0 || p > len) return 0;
    for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
        if (keyword_at(s, len, p, words[k])) return 1;
    if (lit_at(s, len, p, "async") && p + 5 < len && blank(s[p + 5])) {
        p += 5;
        while (p < len && blank(s[p])) p++;
        return keyword_at(s, len, p, "for") || keyword_at(s, len, p, "with");
    }
    return 0;
}

/* _COMPOUND.match(data, p) */
static int compound(const unsigned char *s, Py_ssize_t len, Py_ssize_t p) {
    static const char *const words[] = {"def", "class", "if", "for", "while", "with", "try", "async", "match"};
    if (p < 0 || p > len) return 0;
    if (p < len && s[p] == '@') return 1;
    for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
        if (keyword_at(s, len, p, words[k])) return 1;
    return 0;
}

/* _HEADER_END.search(data, a, b).end(): `:[ \t]*(?:#[^\n]*)?\r?\n`, or -1 */
static Py_ssize_t header_end(const unsigned char *s, Py_ssize_t len, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t end = clamp(b, len);
    for (Py_ssize_t c = clamp(a, len); c < end; c++) {
        const unsigned char *colon = memchr(s + c, ':', (size_t)(end - c));
        if (colon == NULL) return -1;
        c = colon - s;
        Py_ssize_t k = c + 1;
        while (k < end && blank(s[k])) k++;
        if (k < end && s[k] == '#') { /* no newline up to `end`: no later colon finds one either */
            Py_ssize_t e = line_end(s, k, end);
            return e < end ? e + 1 : -1;
        }
        if (k < end && s[k] == '\n') return k + 1;
        if (k + 1 < end && s[k] == '\r' && s[k + 1] == '\n') return k + 2;
    }
    return -1;
}

/* _SIMPLE_ASSIGN.match(data, a).end(): `[ \t]*[A-Za-z_][\w.]*[ \t]*(?::[^=\n]+)?=[^=]`, or -1.
 * Deterministic: every run is taken whole (given back, it faces `:` or `=` with a byte of its
 * own), and the annotation `[^=\n]+` can only end at the first `=`. */
static Py_ssize_t simple_assign_end(const unsigned char *s, Py_ssize_t len, Py_ssize_t p) {
    if (p < 0 || p > len) return -1;
    while (p < len && blank(s[p])) p++;
    if (p >= len || !(re_word(s[p]) && !(s[p] >= '0' && s[p] <= '9'))) return -1;
    p++;
    while (p < len && (re_word(s[p]) || s[p] == '.')) p++;
    while (p < len && blank(s[p])) p++;
    if (p < len && s[p] == ':') {
        Py_ssize_t k = p + 1;
        while (k < len && s[k] != '=' && s[k] != '\n') k++;
        if (k == p + 1 || k >= len || s[k] != '=') return -1;
        p = k;
    }
    if (p + 1 < len && s[p] == '=' && s[p + 1] != '=') return p + 2;
    return -1;
}

/* _IDENT.findall(data, a, b), one name at a time: *from is where to go on; 0 when done. */
static int next_ident(const unsigned char *s, Py_ssize_t *from, Py_ssize_t end, Py_ssize_t *a, Py_ssize_t *b) {
    Py_ssize_t p = *from;
    while (p < end && !(re_word(s[p]) && !(s[p] >= '0' && s[p] <= '9'))) p++;
    if (p >= end) return 0;
    *a = p;
    while (p < end && re_word(s[p])) p++;
    *b = p;
    *from = p;
    return 1;
}

/* The needed names: a set of byte strings of the data (open addressing, offsets into it). */
typedef struct {
    const unsigned char *s;
    Py_ssize_t *at, *n; /* at == -1: an empty slot */
    size_t cap, used;
} NameSet;

static size_t name_hash(const unsigned char *p, Py_ssize_t n) {
    size_t h = 1469598103934665603ull;
    for (Py_ssize_t k = 0; k < n; k++) h = (h ^ p[k]) * 1099511628211ull;
    return h;
}

static int name_slot(const NameSet *set, const unsigned char *p, Py_ssize_t n, size_t *slot) {
    size_t i = name_hash(p, n) & (set->cap - 1);
    while (set->at[i] != -1) {
        if (set->n[i] == n && memcmp(set->s + set->at[i], p, (size_t)n) == 0) {
            *slot = i;
            return 1;
        }
        i = (i + 1) & (set->cap - 1);
    }
    *slot = i;
    return 0;
}

static int names_grow(NameSet *set) {
    size_t cap = set->cap ? set->cap * 2 : 256;
    Py_ssize_t *at = PyMem_Malloc(cap * sizeof(Py_ssize_t)), *n = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    if (at == NULL || n == NULL) {
        PyMem_Free(at);
        PyMem_Free(n);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < cap; k++) at[k] = -1;
    NameSet bigger = {set->s, at, n, cap, set->used};
    for (size_t k = 0; k < set->cap; k++) {
        if (set->at[k] == -1) continue;
        size_t slot;
        name_slot(&bigger, set->s + set->at[k], set->n[k], &slot);
        at[slot] = set->at[k];
        n[slot] = set->n[k];
    }
    PyMem_Free(set->at);
    PyMem_Free(set->n);
    *set = bigger;
    return 0;
}

/* _NOT_NAMES */
static int not_a_name(const unsigned char *p, Py_ssize_t n) {
    return (n == 4 && memcmp(p, "self", 4) == 0) || (n == 3 && memcmp(p, "cls", 3) == 0);
}

static int names_add(NameSet *set, Py_ssize_t a, Py_ssize_t b) {
    size_t slot;
    if (not_a_name(set->s + a, b - a)) return 0;
    if ((set->used + 1) * 2 > set->cap && names_grow(set) < 0) return -1;
    if (name_slot(set, set->s + a, b - a, &slot)) return 0;
    set->at[slot] = a;
    set->n[slot] = b - a;
    set->used++;
    return 0;
}

static int names_has(const NameSet *set, Py_ssize_t a, Py_ssize_t b) {
    size_t slot;
    return set->cap > 0 && !not_a_name(set->s + a, b - a) && name_slot(set, set->s + a, b - a, &slot);
}

/* every name of _IDENT.findall(data, a, b) into the set */
static int names_add_all(NameSet *set, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t from = a, x, y;
    while (next_ident(set->s, &from, b, &x, &y))
        if (names_add(set, x, y) < 0) return -1;
    return 0;
}

/* A piece to keep: [a, b) of the data, or (rep) the blanks [rep_a, rep_b) of the data + `pass`. */
typedef struct {
    Py_ssize_t a, b, rep_a, rep_b;
    int rep;
} Piece;

typedef struct {
    Piece *items;
    Py_ssize_t len, cap;
} Pieces;

static int pieces_push(Pieces *p, Py_ssize_t a, Py_ssize_t b, int rep, Py_ssize_t rep_a, Py_ssize_t rep_b) {
    if (p->len == p->cap) {
        Py_ssize_t cap = p->cap ? p->cap * 2 : 64;
        Piece *items = PyMem_Realloc(p->items, (size_t)cap * sizeof(Piece));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        p->items = items;
        p->cap = cap;
    }
    Piece piece = {a, b, rep_a, rep_b, rep};
    p->items[p->len++] = piece;
    return 0;
}

typedef struct {
    const unsigned char *s;
    Py_ssize_t len;
    Quotes quotes, hits;
    Offsets newlines;  /* offsets of every `\n`: counts by bisection */
    NameSet needed;
    Pieces keep;
    Offsets shortened; /* pairs: first, b */
    int depth;
    int defer;         /* the reference raises here: answer None */
} Cutter;

/* bisect_left over offsets */
static Py_ssize_t lower_bound(const Py_ssize_t *items, Py_ssize_t n, Py_ssize_t v) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (items[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* data.count(b"\n", a, b) for 0 <= a, b <= len */
static Py_ssize_t count_nl(const Cutter *c, Py_ssize_t a, Py_ssize_t b) {
    if (b <= a) return 0;
    return lower_bound(c->newlines.items, c->newlines.len, b) - lower_bound(c->newlines.items, c->newlines.len, a);
}

/* _has_hit: bisect as bisect does it */
static int has_hit(const Cutter *c, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t lo = 0, hi = c->hits.len;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c->hits.items[mid] < (long long)a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->hits.len && c->hits.items[lo] < (long long)b;
}

/* _Cutter._assigns_needed */
static int assigns_needed(const Cutter *c, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t m = simple_assign_end(c->s, c->len, a);
    if (m < 0 || count_nl(c, a, b) > 3) return 0;
    Py_ssize_t from = a, x, y;
    while (next_ident(c->s, &from, m - 1, &x, &y))
        if (names_has(&c->needed, x, y)) return 1;
    return 0;
}

static int cut(Cutter *c, Py_ssize_t a, Py_ssize_t b, Py_ssize_t ind, Py_ssize_t n, int in_def);

/* _Cutter._body: 1 with its pieces pushed, 0 for None, -1 on error. The indent is [ind, ind + n). */
static int cut_body(Cutter *c, Py_ssize_t begin, Py_ssize_t end, Py_ssize_t ind, Py_ssize_t n, int in_def) {
    const unsigned char *s = c->s;
    Offsets members = {NULL, 0, 0};
    unsigned char *chosen = NULL;
    int result = -1;
    if (scan_starts(s, c->len, s + ind, n, begin, end, &c->quotes, &members) < 0) goto done;
    result = 0;
    if (members.len == 0 || members.items[0] != begin) goto done;
    Py_ssize_t count = members.len;
    chosen = PyMem_Malloc((size_t)count);
    if (chosen == NULL) {
        PyErr_NoMemory();
        result = -1;
        goto done;
    }
    int any = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t m = members.items[i], e = i + 1 < count ? members.items[i + 1] : end;
        chosen[i] = has_hit(c, m, e) || (in_def && lit_at(s, c->len, m + n, "return")) || assigns_needed(c, m, e);
        any |= chosen[i];
    }
    if (!any) goto done;
    if (in_def) { /* an `if` right after a hit: what the code does when a lookup comes up empty */
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t m = members.items[i], e = i + 1 < count ? members.items[i + 1] : end;
            if (chosen[i] != 1 || !has_hit(c, m, e)) continue;
            for (Py_ssize_t j = i + 1; j <= i + 2 && j < count; j++)
                if (!chosen[j] && lit_at(s, c->len, members.items[j] + n, "if ")) chosen[j] = 2;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!chosen[i]) continue;
        if (cut(c, members.items[i], i + 1 < count ? members.items[i + 1] : end, ind, n, in_def) < 0) {
            result = -1;
            goto done;
        }
    }
    result = 1;
done:
    PyMem_Free(chosen);
    PyMem_Free(members.items);
    return result;
}

/* _Cutter._members (header: 1 for _CLASS_HEADER, 0 for _DEF_HEADER): 1 with its pieces pushed,
 * 0 for [], -1 on error. */
static int cut_members(Cutter *c, Py_ssize_t a, Py_ssize_t b, int class_header, int in_def) {
    Py_ssize_t head = class_header ? class_header_end(c->s, c->len, a, b) : def_header_end(c->s, c->len, a, b);
    Py_ssize_t body, body_indent;
    if (head < 0 || !body_search(c->s, c->len, head + 1, b, &body, &body_indent)) return 0;
    int long_unnamed = 0; /* a long function whose body names no capability: cut all the same */
    if (in_def) {
        if (!has_hit(c, body, b)) {
            long_unnamed = count_nl(c, a, b) > WHOLE_DEF_LINES;
            if (!long_unnamed) return 0;
        }
        Py_ssize_t k = a; /* _decorator_hit: `@skipIf(capability < 9)`: what the function does is read whole */
        while (k < c->len && blank(c->s[k])) k++;
        if (k < c->len && c->s[k] == '@') {
            Py_ssize_t keyword = keyword_line(c->s, c->len, a, b);
            if (keyword >= 0 && has_hit(c, a, keyword)) return 0;
        }
    }
    Py_ssize_t mark = c->keep.len;
    if (pieces_push(&c->keep, a, body, 0, 0, 0) < 0) return -1;
    int kept = cut_body(c, body, b, body, body_indent - body, in_def);
    if (kept == 0 && long_unnamed) { /* nothing in it to keep: its first line becomes a `pass` */
        Py_ssize_t e = line_end(c->s, body, clamp(b, c->len));
        if (pieces_push(&c->keep, body, e, 1, body, body_indent) < 0) return -1;
        kept = 1;
    }
    if (kept <= 0) c->keep.len = mark;
    return kept;
}

/* _Cutter._block: 1 with its pieces pushed, 0 for [] (pieces pushed taken back; what was noted as
 * shortened on the way stays, as in the reference), -1 on error. */
static int cut_block(Cutter *c, Py_ssize_t a, Py_ssize_t b, Py_ssize_t ind, Py_ssize_t n, int in_def) {
    const unsigned char *s = c->s;
    Py_ssize_t end = clamp(b, c->len), mark = c->keep.len;
    Offsets starts = {NULL, 0, 0};
    int result = -1;
    if (offsets_push(&starts, a) < 0) goto done;
    /* _clause_pattern(indent).finditer(data, a, b): `\n` + indent + (?=(?:elif|else|except|finally)\b) */
    for (Py_ssize_t p = clamp(a, c->len); p < end;) {
        const unsigned char *nl = memchr(s + p, '\n', (size_t)(end - p));
        if (nl == NULL) break;
        p = nl - s + 1;
        Py_ssize_t q = p + n;
        if (q > end || memcmp(s + p, s + ind, (size_t)n) != 0) continue;
        if (!(keyword_at(s, end, q, "elif") || keyword_at(s, end, q, "else") || keyword_at(s, end, q, "except") ||
              keyword_at(s, end, q, "finally")))
            continue;
        if (!in_string(&c->quotes, p) && offsets_push(&starts, p) < 0) goto done;
    }
    result = 0;
    for (Py_ssize_t k = 0; k < starts.len; k++) {
        Py_ssize_t cs = starts.items[k], ce = k + 1 < starts.len ? starts.items[k + 1] : b;
        Py_ssize_t head = header_end(s, c->len, cs, ce), body, body_indent;
        if (head < 0 || has_hit(c, cs, head)) goto give_back; /* a gate (`if`/`while` test): kept whole */
        if (!body_search(s, c->len, head, ce, &body, &body_indent)) goto give_back;
        Py_ssize_t bn = body_indent - body;
        if (bn <= n || memcmp(s + body, s + ind, (size_t)n) != 0) goto give_back;
        if (lit_at(s, c->len, cs + n, "except")) { /* the fallback is read as it is */
            if (pieces_push(&c->keep, cs, ce, 0, 0, 0) < 0) goto fail;
            continue;
        }
        if (pieces_push(&c->keep, cs, body, 0, 0, 0) < 0) goto fail;
        int kept = cut_body(c, body, ce, body, bn, in_def);
        if (kept < 0) goto fail;
        if (kept == 0) {
            Py_ssize_t e = line_end(s, body, clamp(ce, c->len));
            if (pieces_push(&c->keep, body, e, 1, body, body_indent) < 0) goto fail;
        }
    }
    result = 1;
    goto done;
give_back:
    c->keep.len = mark;
    result = 0;
    goto done;
fail:
    result = -1;
done:
    PyMem_Free(starts.items);
    return result;
}

/* _Cutter.cut: the pieces to keep of one relevant statement, pushed; 0, or -1 on error. */
static int cut(Cutter *c, Py_ssize_t a, Py_ssize_t b, Py_ssize_t ind, Py_ssize_t n, int in_def) {
    const unsigned char *s = c->s;
    Py_ssize_t len = c->len, lines = count_nl(c, a, b), start = a + n, first = a;
    int is_class = lit_at(s, len, start, "class "), got = 0;
    if (!is_class && lit_at(s, len, start, "@")) { /* b"\n" + indent + b"class " in data[a : a + 400] */
        Py_ssize_t hi = a + 400 < len ? a + 400 : len;
        for (Py_ssize_t p = a; !is_class && p + n + 7 <= hi; p++)
            is_class = s[p] == '\n' && memcmp(s + p + 1, s + ind, (size_t)n) == 0 && memcmp(s + p + 1 + n, "class ", 6) == 0;
    }
    if (++c->depth > MAX_DEPTH) {
        c->defer = 1;
        return -1;
    }
    if (is_class && lines > BIG_CLASS_LINES)
        got = cut_members(c, a, b, 1, 0);
    else if (!is_class && lines > BIG_DEF_LINES && def_start(s, len, start))
        got = cut_members(c, a, b, 0, 1);
    else if (lines > BIG_BLOCK_LINES && block_start(s, len, start)) {
        got = cut_block(c, a, b, ind, n, in_def);
        if (got > 0) got = 2;
    }
    if (got < 0) return -1;
    if (got == 1) { /* the line the statement's node starts on: `def`/`class`, not a decorator */
        first = keyword_line(s, len, a, b);
        if (first < 0) {
            c->defer = 1; /* the reference raises AttributeError */
            return -1;
        }
    }
    if (got) {
        if (offsets_push(&c->shortened, first) < 0 || offsets_push(&c->shortened, b) < 0) return -1;
    } else if (pieces_push(&c->keep, a, b, 0, 0, 0) < 0)
        return -1;
    c->depth--;
    return 0;
}

/* _with_comments_above: a kept statement's start moved up over the comment lines right above it */
static Py_ssize_t with_comments_above(const unsigned char *s, Py_ssize_t a, Py_ssize_t floor) {
    for (int round = 0; round < 3; round++) {
        Py_ssize_t prev_end = a - 1, prev_start = prev_end;
        if (prev_end <= floor) break;
        while (prev_start > 0 && s[prev_start - 1] != '\n') prev_start--; /* rfind(b"\n", 0, prev_end) + 1 */
        if (prev_start < floor) break;
        Py_ssize_t k = prev_start; /* .lstrip(): ASCII whitespace */
        while (k < prev_end && (s[k] == ' ' || (s[k] >= '\t' && s[k] <= '\r'))) k++;
        if (k >= prev_end || s[k] != '#') break;
        a = prev_start;
    }
    return a;
}

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Text;

static int text_put(Text *t, const void *p, char fill, Py_ssize_t n) {
    if (n <= 0) return 0;
    if (t->len + n > t->cap) {
        Py_ssize_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n) cap *= 2;
        char *buf = PyMem_Realloc(t->buf, (size_t)cap);
        if (buf == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->buf = buf;
        t->cap = cap;
    }
    if (p != NULL)
        memcpy(t->buf + t->len, p, (size_t)n);
    else
        memset(t->buf + t->len, fill, (size_t)n);
    t->len += n;
    return 0;
}

/* the cut text: the pieces as select assembles them */
static PyObject *assemble(const Cutter *c) {
    const unsigned char *s = c->s;
    Text t = {NULL, 0, 0};
    Py_ssize_t pos = 0;
    PyObject *result = NULL;
    for (Py_ssize_t k = 0; k < c->keep.len; k++) {
        Piece pc = c->keep.items[k];
        Py_ssize_t a = pc.a;
        if (!pc.rep) a = with_comments_above(s, a, pos); /* "# capability major -> ..." speaks for the table below */
        if (text_put(&t, NULL, '\n', count_nl(c, pos, a)) < 0) goto done;
        if (pc.rep) {
            if (text_put(&t, s + pc.rep_a, 0, pc.rep_b - pc.rep_a) < 0 || text_put(&t, "pass", 0, 4) < 0) goto done;
        } else if (text_put(&t, s + a, 0, clamp(pc.b, c->len) - a) < 0)
            goto done;
        pos = pc.b;
    }
    if (text_put(&t, NULL, '\n', count_nl(c, pos, c->len)) < 0) goto done;
    result = PyBytes_FromStringAndSize(t.buf != NULL ? t.buf : "", t.len);
done:
    PyMem_Free(t.buf);
    return result;
}

/* _line_spans(data, shortened): {first line: last line}, 1-based */
static PyObject *line_spans(const Cutter *c) {
    PyObject *ends = PyDict_New();
    if (ends == NULL) return NULL;
    for (Py_ssize_t k = 0; k + 1 < c->shortened.len; k += 2) {
        Py_ssize_t a = c->shortened.items[k], b = c->shortened.items[k + 1];
        PyObject *first = PyLong_FromSsize_t(1 + count_nl(c, 0, a));
        PyObject *last = PyLong_FromSsize_t(1 + count_nl(c, 0, b - 1));
        int bad = first == NULL || last == NULL || PyDict_SetItem(ends, first, last) < 0;
        Py_XDECREF(first);
        Py_XDECREF(last);
        if (bad) {
            Py_DECREF(ends);
            return NULL;
        }
    }
    return ends;
}

static int quotes_from_offsets(const Offsets *o, Quotes *q) {
    q->len = o->len;
    q->items = PyMem_Malloc((size_t)(o->len ? o->len : 1) * sizeof(long long));
    if (q->items == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < o->len; k++) q->items[k] = o->items[k];
    return 0;
}

/* chunks.select: (text, ends), or None where the reference raises */
static PyObject *cutscan_select(PyObject *self, PyObject *args) {
    PyObject *data_obj, *result = NULL, *text = NULL, *ends = NULL;
    Offsets quotes = {NULL, 0, 0}, hits = {NULL, 0, 0}, top = {NULL, 0, 0};
    (void)self;
    if (!PyArg_ParseTuple(args, "O!:select", &PyBytes_Type, &data_obj)) return NULL;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t len = PyBytes_GET_SIZE(data_obj);
    Cutter c;
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.len = len;
    c.needed.s = s;
    if (scan_quotes(s, len, &quotes) < 0 || quotes_from_offsets(&quotes, &c.quotes) < 0) goto done;
    if (scan_code_hits(s, len, &c.quotes, &hits) < 0 || quotes_from_offsets(&hits, &c.hits) < 0) goto done;
    if (scan_starts(s, len, (const unsigned char *)"", 0, 0, len, &c.quotes, &top) < 0) goto done;
    if (top.len == 0) {
        ends = PyDict_New();
        if (ends != NULL) result = PyTuple_Pack(2, data_obj, ends);
        goto done;
    }
    for (const unsigned char *p = s; (p = memchr(p, '\n', (size_t)(s + len - p))) != NULL; p++)
        if (offsets_push(&c.newlines, p - s) < 0) goto done;
    /* _needed_names: the names on a line with a hit, and in a module-level statement with a hit
     * that is no compound statement (a table) */
    Py_ssize_t last_line = -1;
    for (Py_ssize_t k = 0; k < hits.len; k++) {
        Py_ssize_t pos = hits.items[k];
        Py_ssize_t i = lower_bound(c.newlines.items, c.newlines.len, pos); /* newlines before pos */
        Py_ssize_t start = i > 0 ? c.newlines.items[i - 1] + 1 : 0;
        Py_ssize_t end = i < c.newlines.len ? c.newlines.items[i] : len; /* data.find(b"\n", pos) */
        if (start == last_line) continue;
        last_line = start;
        if (names_add_all(&c.needed, start, end) < 0) goto done;
    }
    for (Py_ssize_t k = 0; k < top.len; k++) {
        Py_ssize_t a = top.items[k], b = k + 1 < top.len ? top.items[k + 1] : len;
        if (has_hit(&c, a, b) && !compound(s, len, a) && names_add_all(&c.needed, a, b) < 0) goto done;
    }
    for (Py_ssize_t k = 0; k < top.len; k++) {
        Py_ssize_t a = top.items[k], b = k + 1 < top.len ? top.items[k + 1] : len;
        if (!(has_hit(&c, a, b) || assigns_needed(&c, a, b))) continue;
        c.depth = 0;
        if (cut(&c, a, b, 0, 0, 0) < 0) {
            if (c.defer && !PyErr_Occurred()) {
                Py_INCREF(Py_None);
                result = Py_None;
            }
            goto done;
        }
    }
    text = assemble(&c);
    ends = text != NULL ? line_spans(&c) : NULL;
    if (ends != NULL) result = PyTuple_Pack(2, text, ends);
done:
    Py_XDECREF(text);
    Py_XDECREF(ends);
    PyMem_Free(quotes.items);
    PyMem_Free(hits.items);
    PyMem_Free(top.items);
    PyMem_Free(c.quotes.items);
    PyMem_Free(c.hits.items);
    PyMem_Free(c.newlines.items);
    PyMem_Free(c.needed.at);
    PyMem_Free(c.needed.n);
    PyMem_Free(c.keep.items);
    PyMem_Free(c.shortened.items);
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
    {"select", cutscan_select, METH_VARARGS,
     "(cut.text, cut.ends) of chunks.select(data); None where the Python reference raises."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cutscan_module = {
    PyModuleDef_HEAD_INIT, "capgap.reading._cutscan",
    "C byte scans of the statement cut, the relevance test and hint lines.", -1, cutscan_methods,
    NULL, NULL, NULL, NULL,
};

/* Bumped with every change of what the scans return: chunks.py ignores a build of older source
 * (an editable install does not rebuild by itself). */
#define CUTSCAN_VERSION 6

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
