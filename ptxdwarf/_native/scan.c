/* The PTX code scan: the twin of ptxdwarf.ptx.codescan.scan_code (and of the comment masking
 * before it, ptxdwarf.ptx.lexer.mask_comments). It reads comment-masked
 * ASCII text once, from token to token (directive words, braces, strings) and from label
 * colon to label colon, and gives the directives, functions (labels and declaration
 * statements included), module-level declarations and prototypes as plain data; on text
 * the reference would reject, or that is not ASCII, it gives None. */
#include "common.h"

enum { K_NONE, K_SECTION, K_VERSION, K_TARGET, K_ADDRESS_SIZE, K_FILE, K_FUNC, K_DECL, K_OPEN, K_CLOSE, K_STRING };

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static int is_alpha(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static int is_word(uint8_t c) { return is_digit(c) || is_alpha(c) || c == '_'; }
/* A character of a name: [\w$.%]. */
static int is_name(uint8_t c) { return is_word(c) || c == '$' || c == '.' || c == '%'; }
/* \s on the text this kernel takes (it declines 0x1c-0x1f, which Python counts as blanks). */
static int is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

typedef struct {
    const uint8_t *s;
    Py_ssize_t n;
    Py_ssize_t line_pos, line; /* the line of offset line_pos */
} text;

static Py_ssize_t newlines(const uint8_t *p, const uint8_t *end) {
    Py_ssize_t count = 0;
    for (; p < end; p++) count += *p == '\n';
    return count;
}

/* The 1-based line of offset off. */
static Py_ssize_t line_at(text *t, Py_ssize_t off) {
    if (off >= t->line_pos)
        t->line += newlines(t->s + t->line_pos, t->s + off);
    else
        t->line -= newlines(t->s + off, t->s + t->line_pos);
    t->line_pos = off;
    return t->line;
}

/* The first offset at or after a given one holding a character of a set (-1: none), kept for
 * the next question, so that asking from offsets that only grow stays linear. */
typedef struct {
    uint8_t set[256];
    int single; /* the one character of the set, or -1 */
    Py_ssize_t from, at;
} finder;

static void finder_init(finder *f, const char *chars) {
    memset(f->set, 0, sizeof f->set);
    for (const char *c = chars; *c; c++) f->set[(uint8_t)*c] = 1;
    f->single = chars[0] != 0 && chars[1] == 0 ? (uint8_t)chars[0] : -1;
    f->from = -1;
    f->at = -1;
}

static Py_ssize_t find(finder *f, const text *t, Py_ssize_t from) {
    if (f->from >= 0 && from >= f->from && (f->at < 0 || from <= f->at)) return f->at;
    Py_ssize_t i = from;
    if (f->single >= 0) {
        const uint8_t *p = from < t->n ? memchr(t->s + from, f->single, (size_t)(t->n - from)) : NULL;
        i = p != NULL ? p - t->s : t->n;
    }
    while (i < t->n && !f->set[t->s[i]]) i++;
    f->from = from;
    f->at = i < t->n ? i : -1;
    return f->at;
}

static Py_ssize_t skip_space(const text *t, Py_ssize_t i) {
    while (i < t->n && is_space(t->s[i])) i++;
    return i;
}

/* The end of the longest SYMBOL (a section name or an identifier) at i; i when none. */
static Py_ssize_t symbol_end(const text *t, Py_ssize_t i) {
    const uint8_t *s = t->s;
    Py_ssize_t n = t->n, j = i;
    if (j >= n) return i;
    if (s[j] == '.') {
        if (j + 1 >= n || !(is_alpha(s[j + 1]) || s[j + 1] == '_')) return i;
        j += 2;
        while (j < n && (is_word(s[j]) || s[j] == '$' || s[j] == '.')) j++;
        return j;
    }
    if (is_alpha(s[j])) {
        j++;
    } else if (s[j] == '_' || s[j] == '$' || s[j] == '%') {
        if (j + 1 >= n || !(is_word(s[j + 1]) || s[j + 1] == '$')) return i;
        j += 2;
    } else {
        return i;
    }
    while (j < n && (is_word(s[j]) || s[j] == '$')) j++;
    return j;
}

/* Whether s[p:end] is a whole SYMBOL. */
static int is_symbol(const text *t, Py_ssize_t p, Py_ssize_t end) {
    if (p >= end) return 0;
    text view = {t->s, end, 0, 0};
    return symbol_end(&view, p) == end;
}

/* The end of the string literal at i ('"'), or -1 where none is closed on its line. */
static Py_ssize_t string_end(const text *t, Py_ssize_t i) {
    const uint8_t *s = t->s;
    Py_ssize_t j = i + 1;
    while (j < t->n) {
        uint8_t c = s[j];
        if (c == '"') return j + 1;
        if (c == '\n') return -1;
        if (c == '\\') {
            if (j + 1 >= t->n || s[j + 1] == '\n') return -1;
            j += 2;
        } else {
            j++;
        }
    }
    return -1;
}

#define WORD(w, kind) {w, sizeof w - 1, kind}
static const struct {
    const char *word;
    size_t size;
    int kind;
} WORDS[] = {
    WORD("section", K_SECTION), WORD("version", K_VERSION), WORD("target", K_TARGET),
    WORD("address_size", K_ADDRESS_SIZE), WORD("file", K_FILE), WORD("entry", K_FUNC),
    WORD("func", K_FUNC), WORD("reg", K_DECL), WORD("local", K_DECL),
    WORD("shared", K_DECL), WORD("global", K_DECL), WORD("const", K_DECL),
    WORD("param", K_DECL), WORD("tex", K_DECL), WORD("texref", K_DECL),
    WORD("samplerref", K_DECL), WORD("surfref", K_DECL),
};

/* The token at or after pos: its kind (K_NONE at the end), start and end. */
static int next_token(const text *t, Py_ssize_t pos, Py_ssize_t *start, Py_ssize_t *end) {
    const uint8_t *s = t->s;
    for (Py_ssize_t i = pos; i < t->n; i++) {
        uint8_t c = s[i];
        if (c == '{' || c == '}') {
            *start = i;
            *end = i + 1;
            return c == '{' ? K_OPEN : K_CLOSE;
        }
        if (c == '"') {
            Py_ssize_t e = string_end(t, i);
            if (e >= 0) {
                *start = i;
                *end = e;
                return K_STRING;
            }
        } else if (c == '.') {
            Py_ssize_t j = i + 1;
            while (j < t->n && is_word(s[j])) j++;
            size_t len = (size_t)(j - i - 1);
            if (len < 3 || len > 12) continue;
            for (size_t w = 0; w < sizeof WORDS / sizeof WORDS[0]; w++) {
                if (WORDS[w].size == len && memcmp(WORDS[w].word, s + i + 1, len) == 0) {
                    *start = i;
                    *end = j;
                    return WORDS[w].kind;
                }
            }
        }
    }
    return K_NONE;
}

/* Appends item to list and drops the reference; -1 on failure (item NULL included). */
static int append(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int r = PyList_Append(list, item);
    Py_DECREF(item);
    return r;
}

static PyObject *slice(const text *t, Py_ssize_t a, Py_ssize_t b) {
    return PyUnicode_FromStringAndSize((const char *)t->s + a, b - a);
}

/* The end of the well-formed .section block at start (its '}'), or -1. */
static Py_ssize_t section_close(const text *t, Py_ssize_t start) {
    const uint8_t *s = t->s;
    Py_ssize_t i = start + 8;
    if (i >= t->n || !is_space(s[i])) return -1;
    i = skip_space(t, i);
    Py_ssize_t name_end = symbol_end(t, i);
    if (name_end == i) return -1;
    i = skip_space(t, name_end);
    if (i >= t->n || s[i] != '{') return -1;
    const uint8_t *close = memchr(s + i + 1, '}', (size_t)(t->n - i - 1));
    if (close == NULL) return -1;
    Py_ssize_t c = close - s;
    for (Py_ssize_t j = i + 1; j < c; j++) {
        if (s[j] == '{') return -1;
        if (s[j] == '.' && c - j >= 8 && memcmp(s + j, ".section", 8) == 0 && (j + 8 == c || !is_word(s[j + 8])))
            return -1;
    }
    return c;
}

/* The end of the well-formed header directive of kind at start, or -1. */
static Py_ssize_t directive_end(const text *t, int kind, Py_ssize_t start) {
    const uint8_t *s = t->s;
    Py_ssize_t n = t->n, i;
    if (kind == K_VERSION) {
        i = start + 8;
        if (i >= n || !is_space(s[i])) return -1;
        i = skip_space(t, i);
        if (i >= n || !is_digit(s[i])) return -1;
        while (i < n && is_digit(s[i])) i++;
        if (i >= n || s[i] != '.') return -1;
        i++;
        if (i >= n || !is_digit(s[i])) return -1;
        while (i < n && is_digit(s[i])) i++;
        return i;
    }
    if (kind == K_TARGET) {
        int named = 0;
        i = start + 7;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        for (; i < n && s[i] != '\n' && s[i] != ';'; i++)
            if (s[i] != ',' && !is_space(s[i])) named = 1;
        return named ? i : -1;
    }
    i = start + 13;
    if (i >= n || !is_space(s[i])) return -1;
    i = skip_space(t, i);
    Py_ssize_t digits = i;
    while (i < n && is_digit(s[i])) i++;
    if (i - digits != 2 || !(memcmp(s + digits, "32", 2) == 0 || memcmp(s + digits, "64", 2) == 0)) return -1;
    return i;
}

/* Whether a well-formed .file directive starts at start. */
static int file_ok(const text *t, Py_ssize_t start) {
    const uint8_t *s = t->s;
    Py_ssize_t n = t->n, i = start + 5;
    if (i >= n || !is_space(s[i])) return 0;
    i = skip_space(t, i);
    if (i >= n || !is_digit(s[i])) return 0;
    while (i < n && is_digit(s[i])) i++;
    if (i >= n || !is_space(s[i])) return 0;
    i = skip_space(t, i);
    return i < n && s[i] == '"' && string_end(t, i) >= 0;
}

static PyObject *directive(const char *kind, text *t, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t line = line_at(t, start);
    return Py_BuildValue("[snnnn]", kind, start, end, line, line_at(t, end));
}

#define NAMED(w) {w, sizeof w - 1}
typedef struct {
    const char *word;
    size_t size;
} named;

/* The words of ptxdwarf.ptx.lexer.DECL_WORDS and the keys of ptxdwarf.ptx.module.TYPE_SIZES
 * (tests/test_native_scan.py holds them to those). */
static const named SPACES[] = {NAMED("reg"),   NAMED("local"),  NAMED("shared"),     NAMED("global"),
                               NAMED("const"), NAMED("param"),  NAMED("tex"),        NAMED("texref"),
                               NAMED("samplerref"), NAMED("surfref")};
static const named TYPES[] = {
    NAMED(".b8"),    NAMED(".s8"),     NAMED(".u8"),   NAMED(".pred"),   NAMED(".b16"),       NAMED(".s16"),
    NAMED(".u16"),   NAMED(".f16"),    NAMED(".bf16"), NAMED(".b32"),    NAMED(".s32"),       NAMED(".u32"),
    NAMED(".f32"),   NAMED(".f16x2"),  NAMED(".bf16x2"), NAMED(".tf32"), NAMED(".b64"),       NAMED(".s64"),
    NAMED(".u64"),   NAMED(".f64"),    NAMED(".b128"), NAMED(".texref"), NAMED(".samplerref"), NAMED(".surfref"),
};

static int one_of(const named *words, size_t count, const uint8_t *p, size_t size) {
    for (size_t i = 0; i < count; i++)
        if (words[i].size == size && memcmp(words[i].word, p, size) == 0) return 1;
    return 0;
}

/* The end of the run of digits at i (*long_number is set past 4000 of them, which Python's
 * int() may refuse). */
static Py_ssize_t digits_end(const text *t, Py_ssize_t i, Py_ssize_t end, int *long_number) {
    Py_ssize_t j = i;
    while (j < end && is_digit(t->s[j])) j++;
    if (j - i > 4000) *long_number = 1;
    return j;
}

static PyObject *number(const text *t, Py_ssize_t a, Py_ssize_t b) {
    if (b - a <= 18) {
        long long v = 0;
        for (Py_ssize_t i = a; i < b; i++) v = v * 10 + (t->s[i] - '0');
        return PyLong_FromLongLong(v);
    }
    char digits[4001];
    memcpy(digits, t->s + a, (size_t)(b - a));
    digits[b - a] = 0;
    return PyLong_FromString(digits, NULL, 10);
}

/* A declaration from start to end, on line, its initializer from stop (its '=', or end): the
 * fields of its PtxVariable where it is of the simple form (codescan's simple_declaration), else
 * [text, line]. *decline is set for a number too long to read here. */
static PyObject *declaration(const text *t, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t end, Py_ssize_t line,
                             int *decline) {
    const uint8_t *s = t->s;
    int initialized = stop < end;
    Py_ssize_t b = stop;
    while (b > start && is_space(s[b - 1])) b--;
    if (s[start] != '.') goto other;
    /* \.(SPACE)\s+(?:\.align\s+([1-9][0-9]*)\s+)?(\.\w+)\s+(SYMBOL)(?:\s*<\s*([0-9]+)\s*>|\s*\[\s*([0-9]+)\s*\])? */
    Py_ssize_t i = start + 1, word = i, align = -1, align_end = -1, count = -1, count_end = -1, dim = -1, dim_end = -1;
    text view = {s, b, 0, 0};
    while (i < b && is_word(s[i])) i++;
    Py_ssize_t word_end = i;
    if (!one_of(SPACES, sizeof SPACES / sizeof SPACES[0], s + word, (size_t)(word_end - word))) goto other;
    if (i >= b || !is_space(s[i])) goto other;
    i = skip_space(&view, i);
    if (b - i > 6 && memcmp(s + i, ".align", 6) == 0 && is_space(s[i + 6])) {
        Py_ssize_t j = skip_space(&view, i + 6);
        if (j >= b || s[j] < '1' || s[j] > '9') goto other;
        align = j;
        align_end = digits_end(t, j, b, decline);
        if (align_end >= b || !is_space(s[align_end])) goto other;
        i = skip_space(&view, align_end);
    }
    Py_ssize_t type = i;
    if (i >= b || s[i] != '.') goto other;
    i++;
    while (i < b && is_word(s[i])) i++;
    Py_ssize_t type_end = i;
    if (!one_of(TYPES, sizeof TYPES / sizeof TYPES[0], s + type, (size_t)(type_end - type))) goto other;
    if (i >= b || !is_space(s[i])) goto other;
    Py_ssize_t name = skip_space(&view, i), name_end = symbol_end(&view, name);
    if (name_end == name) goto other;
    i = skip_space(&view, name_end);
    if (i < b && (s[i] == '<' || s[i] == '[')) {
        uint8_t close = s[i] == '<' ? '>' : ']';
        Py_ssize_t j = skip_space(&view, i + 1), k = digits_end(t, j, b, decline);
        if (k == j) goto other;
        Py_ssize_t after = skip_space(&view, k);
        if (after + 1 != b || s[after] != close) goto other;
        if (close == '>') count = j, count_end = k;
        else dim = j, dim_end = k;
        i = b;
    }
    if (i != b) goto other;
    if (*decline) return Py_NewRef(Py_None);
    return Py_BuildValue("(NNNnNNNONO)", slice(t, name, name_end), slice(t, word, word_end), slice(t, type, type_end),
                         line, align < 0 ? Py_NewRef(Py_None) : number(t, align, align_end),
                         dim < 0 ? PyTuple_New(0) : Py_BuildValue("(N)", number(t, dim, dim_end)),
                         count < 0 ? Py_NewRef(Py_None) : number(t, count, count_end), Py_None, slice(t, start, b),
                         initialized ? Py_True : Py_False);
other:
    *decline = 0;
    return Py_BuildValue("[Nn]", slice(t, start, end), line);
}

/* The declarations of the parameter list from start to end (within its parentheses), on line,
 * into a new list; NULL with *decline set, as declaration() does. */
static PyObject *parameters(const text *t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t line, int *decline) {
    const uint8_t *s = t->s;
    PyObject *out = PyList_New(0);
    for (Py_ssize_t part = start; out != NULL && part <= end;) {
        Py_ssize_t comma = part;
        while (comma < end && s[comma] != ',') comma++;
        Py_ssize_t a = part, b = comma;
        while (a < b && is_space(s[a])) a++;
        while (b > a && is_space(s[b - 1])) b--;
        if (a < b) {
            Py_ssize_t stop = a;
            while (stop < b && s[stop] != '=') stop++;
            if (append(out, declaration(t, a, stop, b, line, decline)) < 0 || *decline) Py_CLEAR(out);
        }
        part = comma + 1;
    }
    return out;
}

/* The label ended by the colon at colon, if one is, into labels; -1 on failure. */
static int label(text *t, Py_ssize_t colon, Py_ssize_t floor, PyObject *labels) {
    const uint8_t *s = t->s;
    if (colon == 0 || (colon + 1 < t->n && s[colon + 1] == ':')) return 0;
    Py_ssize_t end = colon;
    while (end > floor && is_space(s[end - 1])) end--;
    Py_ssize_t p = end;
    while (p > floor && is_name(s[p - 1])) p--;
    if (p > 0 && is_name(s[p - 1])) return 0; /* the name goes on before the searched span */
    if (!is_symbol(t, p, end)) return 0;
    PyObject *name = slice(t, p, end);
    if (name == NULL) return -1;
    PyObject *line = PyLong_FromSsize_t(line_at(t, p));
    PyObject *r = line == NULL ? NULL : PyDict_SetDefault(labels, name, line);
    Py_DECREF(name);
    Py_XDECREF(line);
    return r == NULL ? -1 : 0;
}

/* Indexes of a function record (codescan.FunctionScan). */
enum { F_BODY_START = 6, F_BODY_END = 7, F_END_LINE = 8, F_LABELS = 9, F_DECLARATIONS = 10 };

static int set_item(PyObject *record, Py_ssize_t index, Py_ssize_t value) {
    PyObject *v = PyLong_FromSsize_t(value);
    return v == NULL ? -1 : PyList_SetItem(record, index, v);
}

/* Declined: 1; failed: -1 (a Python error set); done: 0. */
static int scan(text *t, PyObject *directives, PyObject *functions, PyObject *variables, PyObject *prototypes) {
    const uint8_t *s = t->s;
    Py_ssize_t n = t->n, pos = 0, depth = 0, start, end;
    PyObject *function = NULL, *pending = NULL; /* borrowed from functions */
    finder semicolon, brace_or_eq, paren, body_or_end, colons;
    finder_init(&semicolon, ";");
    finder_init(&brace_or_eq, "{}=;");
    finder_init(&paren, ")");
    finder_init(&body_or_end, "{;");
    finder_init(&colons, ":");
    Py_ssize_t colon = find(&colons, t, 0);
    int kind;
    while ((kind = next_token(t, pos, &start, &end)) != K_NONE) {
        if (0 <= colon && colon < start) {
            if (function != NULL) {
                PyObject *labels = PyList_GET_ITEM(function, F_LABELS);
                while (0 <= colon && colon < start) {
                    if (label(t, colon, pos, labels) < 0) return -1;
                    colon = find(&colons, t, colon + 1);
                }
            } else {
                colon = find(&colons, t, start);
            }
        }
        pos = end;
        if (kind == K_DECL) {
            if (start && is_name(s[start - 1])) continue;
            Py_ssize_t semi = find(&semicolon, t, start);
            if (semi < 0) return 1;
            Py_ssize_t stop = find(&brace_or_eq, t, start);
            if (s[stop] != '{' && s[stop] != '}') {
                PyObject *into = function != NULL ? PyList_GET_ITEM(function, F_DECLARATIONS) : depth == 0 ? variables : NULL;
                if (into != NULL) {
                    int decline = 0;
                    PyObject *decl = declaration(t, start, s[stop] == '=' ? stop : semi, semi, line_at(t, start), &decline);
                    if (decline) {
                        Py_XDECREF(decl);
                        return 1;
                    }
                    if (append(into, decl) < 0) return -1;
                }
                pos = semi + 1;
            }
        } else if (kind == K_OPEN) {
            depth++;
            if (depth == 1 && pending != NULL) {
                function = pending;
                pending = NULL;
                if (set_item(function, F_BODY_START, pos) < 0) return -1;
            }
        } else if (kind == K_CLOSE) {
            depth--;
            if (depth < 0) return 1;
            if (depth == 0 && function != NULL) {
                if (set_item(function, F_BODY_END, start) < 0) return -1;
                if (set_item(function, F_END_LINE, line_at(t, start)) < 0) return -1;
                function = NULL;
            }
        } else if (kind == K_STRING) {
        } else if (kind == K_SECTION) {
            Py_ssize_t close = section_close(t, start);
            if (close < 0) return 1;
            if (append(directives, directive("section", t, start, close)) < 0) return -1;
            pos = close + 1;
        } else if (kind == K_FILE) {
            if (!file_ok(t, start)) return 1;
            if (append(directives, directive("file", t, start, pos)) < 0) return -1;
        } else if (depth == 0 && kind == K_FUNC) {
            /* \.(entry|func)\s*(?:\(([^)]*)\)\s*)?(SYMBOL) */
            Py_ssize_t i = skip_space(t, end), returns = -1, returns_end = -1;
            if (i < n && s[i] == '(') {
                Py_ssize_t r = find(&paren, t, i + 1);
                if (r < 0) goto next;
                returns = i + 1;
                returns_end = r;
                i = skip_space(t, r + 1);
            }
            Py_ssize_t name_end = symbol_end(t, i);
            if (name_end == i) goto next;
            Py_ssize_t name = i, params = -1, params_end = -1;
            /* \s*(?:\(([^)]*)\)\s*)? then [^{;]* */
            i = skip_space(t, name_end);
            if (i < n && s[i] == '(') {
                Py_ssize_t r = find(&paren, t, i + 1);
                if (r >= 0) {
                    params = i + 1;
                    params_end = r;
                    i = skip_space(t, r + 1);
                }
            }
            Py_ssize_t tail = find(&body_or_end, t, i);
            if (tail >= 0 && s[tail] == ';') {
                if (append(prototypes, slice(t, name, name_end)) < 0) return -1;
                pending = NULL;
                pos = tail + 1;
            } else {
                Py_ssize_t line = line_at(t, start);
                int decline = 0;
                PyObject *returned = returns < 0 ? Py_NewRef(Py_None) : parameters(t, returns, returns_end, line, &decline);
                PyObject *taken = params < 0 || returned == NULL
                                      ? Py_NewRef(Py_None)
                                      : parameters(t, params, params_end, line_at(t, name_end), &decline);
                if (decline) {
                    Py_XDECREF(returned);
                    Py_XDECREF(taken);
                    return 1;
                }
                PyObject *record = Py_BuildValue("[NsnnNNnnn{}[]]", slice(t, name, name_end),
                                                 s[start + 1] == 'e' ? "entry" : "func", line, start, returned, taken,
                                                 (Py_ssize_t)-1, (Py_ssize_t)-1, (Py_ssize_t)0);
                if (append(functions, record) < 0) return -1;
                pending = PyList_GET_ITEM(functions, PyList_GET_SIZE(functions) - 1);
                pos = i;
            }
        } else if (depth == 0 && kind != K_FUNC) {
            Py_ssize_t e = directive_end(t, kind, start);
            if (e < 0) return 1;
            const char *word = kind == K_VERSION ? "version" : kind == K_TARGET ? "target" : "address_size";
            if (append(directives, directive(word, t, start, e)) < 0) return -1;
            pos = e;
        }
    next:
        if (0 <= colon && colon < pos) colon = find(&colons, t, pos);
    }
    return depth != 0;
}

static PyObject *scan_code(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyUnicode_IS_ASCII(args[0])) Py_RETURN_NONE;
    text t = {PyUnicode_1BYTE_DATA(args[0]), PyUnicode_GET_LENGTH(args[0]), 0, 1};
    int blank = 0;
    for (Py_ssize_t i = 0; i < t.n; i++) blank |= t.s[i] >= 0x1c && t.s[i] <= 0x1f;
    if (blank) Py_RETURN_NONE;
    PyObject *directives = PyList_New(0), *functions = PyList_New(0), *variables = PyList_New(0),
             *prototypes = PyList_New(0), *result = NULL;
    if (directives && functions && variables && prototypes) {
        int r = scan(&t, directives, functions, variables, prototypes);
        if (r == 0)
            result = PyTuple_Pack(4, directives, functions, variables, prototypes);
        else if (r == 1)
            result = Py_NewRef(Py_None);
    }
    Py_XDECREF(directives);
    Py_XDECREF(functions);
    Py_XDECREF(variables);
    Py_XDECREF(prototypes);
    return result;
}

/* The twin of ptxdwarf.ptx.lexer.mask_comments: text with each comment blanked, newlines kept,
 * strings as they are; None for text that is not ASCII or that the reference rejects (an
 * unclosed block comment). */
static PyObject *mask_comments(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    if (nargs < 1 || !PyUnicode_Check(args[0]) || !PyUnicode_IS_ASCII(args[0])) Py_RETURN_NONE;
    PyObject *source = args[0];
    text t = {PyUnicode_1BYTE_DATA(source), PyUnicode_GET_LENGTH(source), 0, 1};
    const uint8_t *s = t.s;
    PyObject *masked = NULL;
    uint8_t *out = NULL;
    Py_ssize_t no_string = 0; /* no string opens before this offset: the rest of a line whose quote opened none */
    for (Py_ssize_t i = 0; i < t.n;) {
        uint8_t c = s[i];
        if (c == '"' && i >= no_string) {
            Py_ssize_t e = string_end(&t, i);
            if (e < 0) {
                const uint8_t *nl = memchr(s + i, '\n', (size_t)(t.n - i));
                no_string = nl != NULL ? nl - s : t.n;
                e = i + 1;
            }
            i = e;
            continue;
        }
        Py_ssize_t end = -1;
        if (c == '/' && i + 1 < t.n && s[i + 1] == '/') {
            const uint8_t *nl = memchr(s + i, '\n', (size_t)(t.n - i));
            end = nl != NULL ? nl - s : t.n;
        } else if (c == '/' && i + 1 < t.n && s[i + 1] == '*') {
            for (Py_ssize_t j = i + 2; j + 1 < t.n; j++) {
                if (s[j] == '*' && s[j + 1] == '/') {
                    end = j + 2;
                    break;
                }
            }
            if (end < 0) {
                Py_XDECREF(masked);
                Py_RETURN_NONE;
            }
        }
        if (end < 0) {
            i++;
            continue;
        }
        if (masked == NULL) {
            masked = PyUnicode_New(t.n, 127);
            if (masked == NULL) return NULL;
            out = PyUnicode_1BYTE_DATA(masked);
            memcpy(out, s, (size_t)t.n);
        }
        for (Py_ssize_t j = i; j < end; j++)
            if (out[j] != '\n') out[j] = ' ';
        i = end;
    }
    return masked != NULL ? masked : Py_NewRef(source);
}

/* ------------------------------------------------------------------ register_spans */

static int is_name_start(uint8_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$' || c == '%';
}

static int is_name_char(uint8_t c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* A register name's first and last place, in first-use order; an open-addressing table of
 * indices into the entries. */
typedef struct {
    const uint8_t *name;
    Py_ssize_t len, first, last;
} reg_entry;

typedef struct {
    reg_entry *entries;
    Py_ssize_t *slots; /* -1: free */
    size_t n, cap_entries, cap_slots;
} reg_table;

static size_t reg_hash(const uint8_t *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return (size_t)(h ^ (h >> 31));
}

static int reg_grow(reg_table *t) {
    if (t->n + 1 > t->cap_entries) {
        size_t cap = t->cap_entries ? 2 * t->cap_entries : 64;
        reg_entry *e = PyMem_Realloc(t->entries, cap * sizeof(reg_entry));
        if (!e) return -1;
        t->entries = e;
        t->cap_entries = cap;
    }
    if ((t->n + 1) * 2 > t->cap_slots) {
        size_t cap = t->cap_slots ? 2 * t->cap_slots : 128;
        Py_ssize_t *slots = PyMem_Malloc(cap * sizeof(Py_ssize_t));
        if (!slots) return -1;
        for (size_t i = 0; i < cap; i++) slots[i] = -1;
        for (size_t k = 0; k < t->n; k++) {
            size_t i = reg_hash(t->entries[k].name, t->entries[k].len) & (cap - 1);
            while (slots[i] >= 0) i = (i + 1) & (cap - 1);
            slots[i] = (Py_ssize_t)k;
        }
        PyMem_Free(t->slots);
        t->slots = slots;
        t->cap_slots = cap;
    }
    return 0;
}

/* Notes a use of the name p[0:n] at place count. */
static int reg_use(reg_table *t, const uint8_t *p, Py_ssize_t n, Py_ssize_t count) {
    if (reg_grow(t) < 0) return -1;
    size_t i = reg_hash(p, n) & (t->cap_slots - 1);
    while (t->slots[i] >= 0) {
        reg_entry *e = &t->entries[t->slots[i]];
        if (e->len == n && memcmp(e->name, p, (size_t)n) == 0) {
            e->last = count;
            return 0;
        }
        i = (i + 1) & (t->cap_slots - 1);
    }
    t->slots[i] = (Py_ssize_t)t->n;
    t->entries[t->n++] = (reg_entry){p, n, count, count};
    return 0;
}

/* The arguments of register_spans and register_uses: ASCII text and the slice [start, end)
 * of it (0: not such, and no error set). */
static int body_slice(PyObject *const *args, Py_ssize_t nargs, const uint8_t **p, const uint8_t **stop) {
    if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyUnicode_IS_ASCII(args[0]) || !PyLong_CheckExact(args[1]) ||
        !PyLong_CheckExact(args[2]))
        return 0;
    Py_ssize_t size = PyUnicode_GET_LENGTH(args[0]);
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), end = PyLong_AsSsize_t(args[2]);
    if ((start == -1 || end == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    /* the slice masked[start:end] */
    if (start < 0) start = start + size < 0 ? 0 : start + size;
    if (end < 0) end = end + size < 0 ? 0 : end + size;
    if (start > size) start = size;
    if (end > size) end = size;
    if (end < start) end = start;
    const uint8_t *text = PyUnicode_1BYTE_DATA(args[0]);
    *p = text + start;
    *stop = text + end;
    return 1;
}

/* The % names of p[0:stop-p], .reg declarations left out, into t; the count of them and of
 * the branches and calls. -1 with an error set when out of memory. */
static int scan_registers(const uint8_t *p, const uint8_t *stop, reg_table *t, Py_ssize_t *count_out,
                          Py_ssize_t *jumps_out) {
    const uint8_t *next_semicolon = p; /* the first ';' at or after it (stop: none), when looked for */
    int semicolon_known = 0;
    Py_ssize_t count = 0, jumps = 0;
    while (p < stop) {
        uint8_t c = *p;
        if (c == '.' && stop - p >= 4 && memcmp(p, ".reg", 4) == 0 && (stop - p == 4 || !is_name_char(p[4]) || p[4] == '$')) {
            /* \.reg\b[^;]*; becomes ";" */
            if (!semicolon_known || next_semicolon < p) {
                next_semicolon = memchr(p, ';', (size_t)(stop - p));
                if (!next_semicolon) next_semicolon = stop;
                semicolon_known = 1;
            }
            if (next_semicolon < stop) {
                p = next_semicolon + 1;
                continue;
            }
        }
        if (!is_name_start(c)) {
            p++;
            continue;
        }
        const uint8_t *q = p + 1;
        while (q < stop && is_name_char(*q)) q++;
        Py_ssize_t n = q - p;
        if (c == '%') {
            if (reg_use(t, p, n, count) < 0) {
                PyErr_NoMemory();
                return -1;
            }
            count++;
        } else if ((n == 3 && (memcmp(p, "bra", 3) == 0 || memcmp(p, "brx", 3) == 0)) ||
                   (n == 4 && memcmp(p, "call", 4) == 0)) {
            jumps++;
        }
        p = q;
    }
    *count_out = count;
    *jumps_out = jumps;
    return 0;
}

/* register_spans(masked, start, end): the twin of ptxdwarf.ptx.statements.register_spans, for
 * ASCII text (None for other). */
static PyObject *register_spans(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *p, *stop;
    if (!body_slice(args, nargs, &p, &stop)) Py_RETURN_NONE;
    reg_table t = {NULL, NULL, 0, 0, 0};
    Py_ssize_t count = 0, jumps = 0;
    PyObject *spans = NULL, *result = NULL;
    if (scan_registers(p, stop, &t, &count, &jumps) < 0) goto done;
    spans = PyDict_New();
    if (!spans) goto done;
    for (size_t k = 0; k < t.n; k++) {
        PyObject *name = PyUnicode_FromStringAndSize((const char *)t.entries[k].name, t.entries[k].len);
        PyObject *span = name ? Py_BuildValue("(nn)", t.entries[k].first, t.entries[k].last) : NULL;
        int r = span ? PyDict_SetItem(spans, name, span) : -1;
        Py_XDECREF(name);
        Py_XDECREF(span);
        if (r < 0) goto done;
    }
    result = Py_BuildValue("(Onn)", spans, count, jumps);
done:
    Py_XDECREF(spans);
    PyMem_Free(t.entries);
    PyMem_Free(t.slots);
    return result;
}

/* register_uses(masked, start, end): the twin of ptxdwarf.ptx.statements.register_uses, for
 * ASCII text (None for other). */
static PyObject *register_uses(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    const uint8_t *p, *stop;
    if (!body_slice(args, nargs, &p, &stop)) Py_RETURN_NONE;
    reg_table t = {NULL, NULL, 0, 0, 0};
    Py_ssize_t count = 0, jumps = 0, size = 1;
    PyObject *names = NULL, *result = NULL;
    if (scan_registers(p, stop, &t, &count, &jumps) < 0) goto done;
    for (size_t k = 0; k < t.n; k++) size += t.entries[k].len + 1;
    names = PyUnicode_New(size, 127);
    if (!names) goto done;
    uint8_t *out = PyUnicode_1BYTE_DATA(names);
    *out++ = 0;
    for (size_t k = 0; k < t.n; k++) {
        memcpy(out, t.entries[k].name, (size_t)t.entries[k].len);
        out += t.entries[k].len;
        *out++ = 0;
    }
    result = Py_BuildValue("(Onn)", names, count, jumps);
done:
    Py_XDECREF(names);
    PyMem_Free(t.entries);
    PyMem_Free(t.slots);
    return result;
}

/* ------------------------------------------------------------------ split_statements */

/* \s of a Python str pattern, on ASCII. */
static int is_blank(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }
static int is_ident_char(uint8_t c) { return is_word(c) || c == '$'; }

/* Where the four slots of a Stmt class (ptxdwarf.ptx.statements.Stmt) live. */
typedef struct {
    Py_ssize_t start, end, text, kind;
} stmt_fields;

/* A new Stmt holding start, end, text and kind (references it takes; NULL for any: an error
 * set), made as its __init__ makes one, which only stores the four. */
static PyObject *new_stmt(PyTypeObject *type, const stmt_fields *fields, Py_ssize_t start, Py_ssize_t end,
                          PyObject *text, PyObject *kind) {
    PyObject *first = PyLong_FromSsize_t(start), *last = PyLong_FromSsize_t(end);
    PyObject *stmt = first && last && text ? type->tp_alloc(type, 0) : NULL;
    if (!stmt) {
        Py_XDECREF(first);
        Py_XDECREF(last);
        Py_XDECREF(text);
        Py_DECREF(kind);
        return NULL;
    }
    *(PyObject **)((char *)stmt + fields->start) = first;
    *(PyObject **)((char *)stmt + fields->end) = last;
    *(PyObject **)((char *)stmt + fields->text) = text;
    *(PyObject **)((char *)stmt + fields->kind) = kind;
    return stmt;
}

static PyObject *ascii_slice(const uint8_t *s, Py_ssize_t start, Py_ssize_t end) {
    PyObject *out = PyUnicode_New(end - start, 127);
    if (out) memcpy(PyUnicode_1BYTE_DATA(out), s + start, (size_t)(end - start));
    return out;
}

/* The length of the label definition (IDENTIFIER \s* ':' not followed by ':') at s[i:end],
 * and in *name_end where its name ends; 0 when none starts there. */
static Py_ssize_t label_at(const uint8_t *s, Py_ssize_t i, Py_ssize_t end, Py_ssize_t *name_end) {
    Py_ssize_t j = i;
    if (j < end && is_alpha(s[j])) {
        j++;
    } else if (j + 1 < end && (s[j] == '_' || s[j] == '$' || s[j] == '%') && is_ident_char(s[j + 1])) {
        j += 2;
    } else {
        return 0;
    }
    while (j < end && is_ident_char(s[j])) j++;
    *name_end = j;
    while (j < end && is_blank(s[j])) j++;
    if (j >= end || s[j] != ':' || (j + 1 < end && s[j + 1] == ':')) return 0;
    return j + 1 - i;
}

static PyObject *kind_label, *kind_directive, *kind_instr;

/* _split(stmt, masked, start, end, labels, until): the twin of
 * ptxdwarf.ptx.statements._split, for ASCII text and a body inside it (None for other). */
static PyObject *_split(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !PyType_Check(args[0]) || !PyType_HasFeature((PyTypeObject *)args[0], Py_TPFLAGS_HEAPTYPE) ||
        ((PyTypeObject *)args[0])->tp_dictoffset != 0 || !PyUnicode_Check(args[1]) || !PyUnicode_IS_ASCII(args[1]) ||
        !PyLong_CheckExact(args[2]) || !PyLong_CheckExact(args[3]) || !PyBool_Check(args[4]) ||
        !(args[5] == Py_None || PyLong_CheckExact(args[5])))
        Py_RETURN_NONE;
    PyTypeObject *type = (PyTypeObject *)args[0];
    Py_ssize_t size = PyUnicode_GET_LENGTH(args[1]);
    Py_ssize_t start = PyLong_AsSsize_t(args[2]), end = PyLong_AsSsize_t(args[3]);
    Py_ssize_t until = args[5] == Py_None ? end : PyLong_AsSsize_t(args[5]);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (start < 0 || end > size || start > end) Py_RETURN_NONE;
    stmt_fields fields;
    if (slot_offset(type, "start", &fields.start) || slot_offset(type, "end", &fields.end) ||
        slot_offset(type, "text", &fields.text) || slot_offset(type, "kind", &fields.kind)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (!kind_label) {
        kind_label = PyUnicode_InternFromString("label");
        kind_directive = PyUnicode_InternFromString("directive");
        kind_instr = PyUnicode_InternFromString("instr");
        if (!kind_label || !kind_directive || !kind_instr) {
            Py_CLEAR(kind_label);
            return NULL;
        }
    }
    int labels = args[4] == Py_True;
    const uint8_t *s = PyUnicode_1BYTE_DATA(args[1]);
    Py_ssize_t stop_at = until < end ? until : end;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    Py_ssize_t pos = start;
    while (pos < stop_at) {
        Py_ssize_t first = pos;
        while (first < end && (is_blank(s[first]) || s[first] == '{' || s[first] == '}' || s[first] == ';')) first++;
        if (first >= end) break;
        PyObject *stmt = NULL;
        Py_ssize_t name_end, length = label_at(s, first, end, &name_end);
        if (length) {
            pos = first + length;
            if (!labels) continue;
            stmt = new_stmt(type, &fields, first, pos, ascii_slice(s, first, name_end), Py_NewRef(kind_label));
        } else if ((end - first >= 4 && memcmp(s + first, ".loc", 4) == 0) ||
                   (end - first >= 5 && memcmp(s + first, ".file", 5) == 0) ||
                   (end - first >= 2 && s[first] == '@' && s[first + 1] == '@')) {
            const uint8_t *nl = memchr(s + first, '\n', (size_t)(end - first));
            Py_ssize_t stop = nl ? nl - s : end;
            stmt = new_stmt(type, &fields, first, stop, ascii_slice(s, first, stop), Py_NewRef(kind_directive));
            pos = stop;
        } else {
            Py_ssize_t stop = first;
            while (stop < end && s[stop] != ';') {
                if (s[stop] == '"') {
                    const uint8_t *close = memchr(s + stop + 1, '"', (size_t)(end - stop - 1));
                    if (!close) break;
                    stop = close - s + 1;
                } else {
                    stop++;
                }
            }
            if (stop < end && s[stop] != ';') stop = end; /* a quote that no other closes */
            stmt = new_stmt(type, &fields, first, stop + 1, ascii_slice(s, first, stop),
                            Py_NewRef(s[first] == '.' ? kind_directive : kind_instr));
            pos = stop + 1;
        }
        if (!stmt || PyList_Append(out, stmt) < 0) {
            Py_XDECREF(stmt);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(stmt);
    }
    return out;
}


/* ------------------------------------------------------------------ the first look at a module */

enum { P_MARK = 1, P_SPACE = 2, P_NEWLINE = 4, P_DOT = 8, P_AT = 16 };

/* The class of each ASCII byte for _prescan: what _marks keeps (the control characters, braces,
 * slashes and stars), what str.isspace() is, the newline, and the two bytes that may start what
 * it looks for. */
static uint8_t prescan_class[128];

static void prescan_classes(void) {
    for (int c = 0; c < 128; c++) {
        uint8_t k = 0;
        if ((c <= 0x08) || (c >= 0x0e && c <= 0x1f) || c == 0x7f || c == '{' || c == '}' || c == '/' || c == '*')
            k |= P_MARK;
        if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) k |= P_SPACE;
        if (c == '\n') k |= P_NEWLINE;
        if (c == '.') k |= P_DOT;
        if (c == '@') k |= P_AT;
        prescan_class[c] = k;
    }
}

static int word_end(const uint8_t *s, Py_ssize_t n, Py_ssize_t i) {
    if (i >= n) return 1;
    uint8_t c = s[i];
    return !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_');
}

/* _prescan(text): the twin of ptxdwarf.ptx.reader._prescan, in one pass; None for text that is
 * not ASCII. */
static PyObject *_prescan(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || !PyUnicode_Check(args[0]) || !PyUnicode_IS_ASCII(args[0])) Py_RETURN_NONE;
    const uint8_t *s = PyUnicode_1BYTE_DATA(args[0]);
    Py_ssize_t n = PyUnicode_GET_LENGTH(args[0]);
    buffer marks = {0};
    PyObject *sections = PyList_New(0), *files = PyList_New(0), *result = NULL;
    int at_start = 1, dwarf = 0;
    if (!sections || !files) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t k = prescan_class[s[i]];
        if (k == 0) {
            at_start = 0;
            continue;
        }
        if ((k & P_MARK) && buffer_byte(&marks, s[i]) < 0) goto done;
        if (k & P_NEWLINE) {
            at_start = 1;
            continue;
        }
        if (k & P_SPACE) continue;
        if ((k & P_DOT) && at_start) {
            PyObject *into = NULL;
            if (n - i >= 8 && memcmp(s + i, ".section", 8) == 0 && word_end(s, n, i + 8)) into = sections;
            else if (n - i >= 5 && memcmp(s + i, ".file", 5) == 0 && word_end(s, n, i + 5)) into = files;
            if (into) {
                PyObject *at = PyLong_FromSsize_t(i);
                int r = at ? PyList_Append(into, at) : -1;
                Py_XDECREF(at);
                if (r < 0) goto done;
            }
        }
        if ((k & P_AT) && !dwarf && n - i >= 7 && memcmp(s + i, "@@DWARF", 7) == 0) dwarf = 1;
        at_start = 0;
    }
    PyObject *marked = buffer_bytes(&marks);
    if (marked) result = Py_BuildValue("(NOOO)", marked, sections, files, dwarf ? Py_True : Py_False);
done:
    buffer_free(&marks);
    Py_XDECREF(sections);
    Py_XDECREF(files);
    return result;
}

static PyMethodDef methods[] = {
    {"_split", (PyCFunction)(void (*)(void))_split, METH_FASTCALL, "The twin of ptxdwarf.ptx.statements._split."},
    {"register_spans", (PyCFunction)(void (*)(void))register_spans, METH_FASTCALL,
     "The twin of ptxdwarf.ptx.statements.register_spans."},
    {"register_uses", (PyCFunction)(void (*)(void))register_uses, METH_FASTCALL,
     "The twin of ptxdwarf.ptx.statements.register_uses."},
    {"scan_code", (PyCFunction)(void (*)(void))scan_code, METH_FASTCALL, "The twin of ptxdwarf.ptx.codescan.scan_code."},
    {"mask_comments", (PyCFunction)(void (*)(void))mask_comments, METH_FASTCALL | METH_KEYWORDS,
     "The twin of ptxdwarf.ptx.lexer.mask_comments."},
    {"_prescan", (PyCFunction)(void (*)(void))_prescan, METH_FASTCALL, "The twin of ptxdwarf.ptx.reader._prescan."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "scan", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_scan(void) {
    prescan_classes();
    return PyModule_Create(&module);
}
