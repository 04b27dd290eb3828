/* The section writer: the twin of ptxdwarf.ptx.writer.format_section. It writes one section
 * image (its name, bytes, relocations, labels, field widths and record breaks) as a PTX
 * .section block in the nvcc, readable or compact style. It takes only images whose
 * relocations are sorted, do not overlap and lie in the bytes, whose labels lie in the bytes
 * and outside every symbolic value, whose field widths are 2, 4 or 8 (or at most 1: none) and
 * whose texts are ASCII; on anything else it gives None. */
#include "common.h"

/* The reference's layout numbers: _LINE, _MAX_VALUES, B64_LIMIT and _SWITCH of writer.py. */
#define LINE 100
#define MAX_VALUES 64
#define B64_LIMIT ((uint64_t)1 << 32)
#define SWITCH 6

enum { STYLE_NVCC, STYLE_READABLE, STYLE_COMPACT };

static char dec_text[256][4];
static uint8_t dec_len[256];

typedef struct {
    Py_ssize_t offset, size;
    PyObject *symbol, *text; /* owned; text: what str() gives */
} reloc_t;

typedef struct {
    Py_ssize_t offset, order;
    PyObject *name; /* owned */
} label_t;

typedef struct {
    const uint8_t *data;
    Py_ssize_t n;
    reloc_t *relocs;
    Py_ssize_t nrelocs;
    label_t *labels;
    Py_ssize_t nlabels;
    uint8_t *widths; /* field width at each offset, 0: none; NULL when there are no fields */
    int64_t *breaks;
    Py_ssize_t nbreaks;
    int hints; /* the image has fields or breaks (the readable style's record layout) */
    buffer out;
} section;

static int put(buffer *b, const char *text, size_t n) { return buffer_put(b, text, n); }

static int put_str(buffer *b, PyObject *text) {
    return put(b, (const char *)PyUnicode_1BYTE_DATA(text), (size_t)PyUnicode_GET_LENGTH(text));
}

static int put_u64(buffer *b, uint64_t v) {
    char digits[24];
    int i = 24;
    do {
        digits[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return put(b, digits + i, (size_t)(24 - i));
}

/* "\n.bN " for a directive of width bytes. */
static int put_directive(buffer *b, Py_ssize_t width) {
    if (put(b, "\n.b", 3) < 0 || put_u64(b, (uint64_t)width * 8) < 0) return -1;
    return put(b, " ", 1);
}

static uint64_t value_at(const uint8_t *data, Py_ssize_t pos, Py_ssize_t width) {
    uint64_t v = 0;
    for (Py_ssize_t i = 0; i < width; i++) v |= (uint64_t)data[pos + i] << (8 * i);
    return v;
}

/* The value of up to 8 bytes at pos (fewer at the end of the data), as the reference's
 * int.from_bytes(data[pos:pos + 8]) gives it. */
static uint64_t wide_value_at(const section *s, Py_ssize_t pos) {
    Py_ssize_t width = s->n - pos < 8 ? s->n - pos : 8;
    return value_at(s->data, pos, width);
}

static int put_symbol(buffer *b, const reloc_t *r) {
    return put_directive(b, r->size) < 0 ? -1 : put_str(b, r->text);
}

static int put_label(buffer *b, const label_t *l) {
    if (put(b, "\n", 1) < 0 || put_str(b, l->name) < 0) return -1;
    return put(b, ":", 1);
}

/* --- reading the image ------------------------------------------------------------------ */

/* An exact int in [0, limit], or -1. */
static Py_ssize_t offset_of(PyObject *o, Py_ssize_t limit) {
    if (!PyLong_CheckExact(o)) return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || v < 0 || v > limit) return -1;
    return (Py_ssize_t)v;
}

/* An exact int as a long long; 0 with *ok cleared when it is not one or does not fit. */
static long long int_of(PyObject *o, int *ok) {
    if (!PyLong_CheckExact(o)) { *ok = 0; return 0; }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) *ok = 0;
    return v;
}

static int is_ascii_str(PyObject *o) { return PyUnicode_CheckExact(o) && PyUnicode_IS_ASCII(o); }

static int label_order(const void *a, const void *b) {
    const label_t *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void section_free(section *s) {
    for (Py_ssize_t i = 0; i < s->nrelocs; i++) {
        Py_XDECREF(s->relocs[i].symbol);
        Py_XDECREF(s->relocs[i].text);
    }
    for (Py_ssize_t i = 0; i < s->nlabels; i++) Py_XDECREF(s->labels[i].name);
    PyMem_Free(s->relocs);
    PyMem_Free(s->labels);
    PyMem_Free(s->widths);
    PyMem_Free(s->breaks);
    buffer_free(&s->out);
}

/* Everything but the symbols' texts, read without running Python code; 0, or -1 when the
 * image is not one the kernel takes (a Python error set only when memory ran out). */
static int read_parts(section *s, PyObject *relocs, PyObject *labels, PyObject *fields, PyObject *breaks) {
    Py_ssize_t n = s->n;
    Py_ssize_t count = PyList_GET_SIZE(relocs);
    s->relocs = PyMem_Calloc(count ? (size_t)count : 1, sizeof(reloc_t));
    if (!s->relocs) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *r = PyList_GET_ITEM(relocs, i);
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) return -1;
        Py_ssize_t offset = offset_of(PyTuple_GET_ITEM(r, 0), n);
        Py_ssize_t size = offset_of(PyTuple_GET_ITEM(r, 1), 8);
        if (offset < 0 || (size != 1 && size != 2 && size != 4 && size != 8) || offset + size > n) return -1;
        if (i && s->relocs[i - 1].offset + s->relocs[i - 1].size > offset) return -1;
        PyObject *symbol = PyTuple_GET_ITEM(r, 2);
        Py_INCREF(symbol);
        s->relocs[i] = (reloc_t){offset, size, symbol, NULL};
        s->nrelocs = i + 1;
    }

    count = PyDict_GET_SIZE(labels);
    s->labels = PyMem_Calloc(count ? (size_t)count : 1, sizeof(label_t));
    if (!s->labels) { PyErr_NoMemory(); return -1; }
    Py_ssize_t at = 0, order = 0;
    PyObject *key, *value;
    while (PyDict_Next(labels, &at, &key, &value)) {
        Py_ssize_t offset = offset_of(value, n);
        if (offset < 0 || !is_ascii_str(key) || order >= count) return -1;
        Py_INCREF(key);
        s->labels[order] = (label_t){offset, order, key};
        s->nlabels = ++order;
    }
    qsort(s->labels, (size_t)s->nlabels, sizeof(label_t), label_order);
    /* A label inside a symbolic value is the reference's EncodeError. */
    for (Py_ssize_t i = 0, j = 0; i < s->nlabels; i++) {
        while (j < s->nrelocs && s->relocs[j].offset + s->relocs[j].size <= s->labels[i].offset) j++;
        if (j < s->nrelocs && s->relocs[j].offset < s->labels[i].offset) return -1;
    }

    if (PyDict_GET_SIZE(fields)) {
        s->hints = 1;
        s->widths = PyMem_Calloc(n ? (size_t)n : 1, 1);
        if (!s->widths) { PyErr_NoMemory(); return -1; }
        at = 0;
        while (PyDict_Next(fields, &at, &key, &value)) {
            int ok = 1;
            long long offset = int_of(key, &ok), width = int_of(value, &ok);
            if (!ok || (width > 1 && width != 2 && width != 4 && width != 8)) return -1;
            if (width > 1 && offset >= 0 && offset < n) s->widths[offset] = (uint8_t)width;
        }
    }

    count = PyList_GET_SIZE(breaks);
    if (count) s->hints = 1;
    s->breaks = PyMem_Malloc(count ? (size_t)count * sizeof(int64_t) : 1);
    if (!s->breaks) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < count; i++) {
        int ok = 1;
        long long offset = int_of(PyList_GET_ITEM(breaks, i), &ok);
        if (!ok) return -1;
        /* A break outside the bytes changes nothing the reference writes. */
        if (offset >= 0 && offset < n) s->breaks[s->nbreaks++] = offset;
    }
    return 0;
}

/* The symbols' texts: str() of each, which may run any Python code (the parts are copied). */
static int read_symbols(section *s) {
    for (Py_ssize_t i = 0; i < s->nrelocs; i++) {
        PyObject *symbol = s->relocs[i].symbol;
        PyObject *text = PyUnicode_CheckExact(symbol) ? (Py_INCREF(symbol), symbol) : PyObject_Str(symbol);
        if (!text) { PyErr_Clear(); return -1; }
        s->relocs[i].text = text;
        if (!is_ascii_str(text)) return -1;
    }
    return 0;
}

/* --- nvcc and compact: the image cut at its labels and symbols ---------------------------- */

typedef int (*bytes_writer)(section *s, Py_ssize_t start, Py_ssize_t end, void *state);
typedef int (*mark_writer)(section *s, void *state);

/* The reference's _segments: bytes between the cuts, labels (in definition order) and then
 * the symbol at each cut. */
static int walk_segments(section *s, bytes_writer bytes, mark_writer before_line, void *state) {
    Py_ssize_t pos = 0, li = 0, ri = 0;
    while (li < s->nlabels || ri < s->nrelocs) {
        Py_ssize_t cut = li < s->nlabels ? s->labels[li].offset : s->n;
        if (ri < s->nrelocs && s->relocs[ri].offset < cut) cut = s->relocs[ri].offset;
        if (cut > pos) {
            if (bytes(s, pos, cut, state) < 0) return -1;
            pos = cut;
        }
        for (; li < s->nlabels && s->labels[li].offset == cut; li++)
            if (before_line(s, state) < 0 || put_label(&s->out, &s->labels[li]) < 0) return -1;
        if (ri < s->nrelocs && s->relocs[ri].offset == cut) {
            if (before_line(s, state) < 0 || put_symbol(&s->out, &s->relocs[ri]) < 0) return -1;
            pos = cut + s->relocs[ri].size;
            ri++;
        }
    }
    return pos < s->n ? bytes(s, pos, s->n, state) : 0;
}

static int nvcc_bytes(section *s, Py_ssize_t pos, Py_ssize_t end, void *state) {
    buffer *b = &s->out;
    while (pos < end) {
        Py_ssize_t width = s->widths && s->widths[pos] ? s->widths[pos] : 1;
        if (width == 8 && wide_value_at(s, pos) >= B64_LIMIT) width = 4;
        if (width > 1 && pos + width <= end) {
            if (put_directive(b, width) < 0 || put_u64(b, value_at(s->data, pos, width)) < 0) return -1;
            pos += width;
        } else {
            if (put(b, "\n.b8 ", 5) < 0 || put(b, dec_text[s->data[pos]], dec_len[s->data[pos]]) < 0) return -1;
            pos++;
        }
    }
    return 0;
}

static int no_line(section *s, void *state) { return 0; }

/* The compact style's open directive (the reference's _Lines without a line length). */
typedef struct {
    Py_ssize_t width, values;
    uint8_t *choice; /* the width chosen at each byte, per open width (rows of 5) */
    size_t cap;
} compact_state;

static int compact_close(section *s, void *state) {
    compact_state *c = state;
    c->width = c->values = 0;
    return 0;
}

static int width_index(Py_ssize_t width) { return width == 8 ? 4 : width == 4 ? 3 : width; }

static int digits10(uint64_t v) {
    int d = 1;
    while (v >= 10) { v /= 10; d++; }
    return d;
}

static int digits16(uint64_t v) {
    int d = 1;
    while (v >= 16) { v >>= 4; d++; }
    return d;
}

/* The reference's _num: decimal, or hexadecimal from a million on where it is shorter. */
static int num_hex(uint64_t v) { return v >= 1000000 && 2 + digits16(v) < digits10(v); }

static int num_len(uint64_t v) { return num_hex(v) ? 2 + digits16(v) : digits10(v); }

static int put_num(buffer *b, uint64_t v) {
    if (!num_hex(v)) return put_u64(b, v);
    char digits[20];
    int i = 20;
    do {
        digits[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    if (put(b, "0x", 2) < 0) return -1;
    return put(b, digits + i, (size_t)(20 - i));
}

/* The reference's _pack (the directive widths that write the bytes in the fewest characters,
 * ties to the narrower) followed by _Lines.value for each value it chooses. */
static int compact_bytes(section *s, Py_ssize_t start, Py_ssize_t end, void *state) {
    static const Py_ssize_t widths[4] = {1, 2, 4, 8};
    compact_state *c = state;
    size_t n = (size_t)(end - start), rows = n + 1;
    if (n > UINT32_MAX / 16) return -1; /* the costs would not fit: the reference writes it */
    if (rows > c->cap) {
        size_t cap = rows > 2 * c->cap ? rows : 2 * c->cap;
        if (cap > ((size_t)PY_SSIZE_T_MAX) / 5) { PyErr_NoMemory(); return -1; }
        uint8_t *choice = PyMem_Realloc(c->choice, cap * 5);
        if (!choice) { PyErr_NoMemory(); return -1; }
        c->choice = choice;
        c->cap = cap;
    }
    const uint8_t *data = s->data + start;
    /* best[i % 16]: the least cost of the bytes from i on, per open width; a value reaches
     * at most 8 bytes ahead. */
    uint32_t best[16][5];
    for (int w = 0; w < 5; w++) best[n % 16][w] = 0;
    for (size_t i = n; i-- > 0;) {
        uint32_t base[4];
        int fits[4];
        for (int k = 0; k < 4; k++) {
            size_t w = (size_t)widths[k];
            fits[k] = i + w <= n;
            if (!fits[k]) continue;
            uint64_t v = value_at(data, (Py_ssize_t)i, (Py_ssize_t)w);
            if (w == 8 && v >= B64_LIMIT) { fits[k] = 0; continue; }
            base[k] = (uint32_t)num_len(v) + best[(i + w) % 16][width_index(widths[k])];
        }
        for (int open = 0; open < 5; open++) {
            uint32_t least = UINT32_MAX;
            uint8_t chosen = 1;
            for (int k = 0; k < 4; k++) {
                if (!fits[k]) continue;
                uint32_t cost = base[k] + (open == width_index(widths[k]) ? 1 : SWITCH);
                if (cost < least) { least = cost; chosen = (uint8_t)widths[k]; }
            }
            best[i % 16][open] = least;
            c->choice[i * 5 + open] = chosen;
        }
    }
    buffer *b = &s->out;
    Py_ssize_t open = c->width;
    for (size_t i = 0; i < n;) {
        Py_ssize_t w = c->choice[i * 5 + width_index(open)];
        if (c->width != w || c->values >= MAX_VALUES) {
            if (put_directive(b, w) < 0) return -1;
            c->width = w;
            c->values = 0;
        } else if (put(b, ",", 1) < 0) {
            return -1;
        }
        if (put_num(b, value_at(data, (Py_ssize_t)i, w)) < 0) return -1;
        c->values++;
        i += (size_t)w;
        open = w;
    }
    return 0;
}

/* --- readable ------------------------------------------------------------------------------ */

enum { MARK_BREAK, MARK_LABEL, MARK_SYMBOL, MARK_FIELD };

/* A stable sort of int64 keys that takes runs already in order as they are (the marks come
 * as a few sorted runs). */
static int sort_marks(int64_t *keys, Py_ssize_t count) {
    if (count < 2) return 0;
    int64_t *tmp = PyMem_Malloc((size_t)count * sizeof(int64_t));
    if (!tmp) { PyErr_NoMemory(); return -1; }
    int64_t *src = keys, *dst = tmp;
    while (1) {
        Py_ssize_t runs = 0, i = 0;
        while (i < count) {
            Py_ssize_t a = i, mid = i + 1;
            while (mid < count && src[mid - 1] <= src[mid]) mid++;
            Py_ssize_t e = mid;
            if (e < count) {
                e++;
                while (e < count && src[e - 1] <= src[e]) e++;
            }
            Py_ssize_t x = a, y = mid, k = a;
            while (x < mid && y < e) dst[k++] = src[y] < src[x] ? src[y++] : src[x++];
            while (x < mid) dst[k++] = src[x++];
            while (y < e) dst[k++] = src[y++];
            i = e;
            runs++;
        }
        int64_t *t = src;
        src = dst;
        dst = t;
        if (runs <= 1) break;
    }
    if (src != keys) memcpy(keys, src, (size_t)count * sizeof(int64_t));
    PyMem_Free(tmp);
    return 0;
}

/* Every offset where something other than a plain byte happens, as offset << 4 | kind (a
 * field's kind is MARK_FIELD plus its width), sorted, then an end mark past the data: the
 * reference's _marks. */
static int64_t *readable_marks(section *s, Py_ssize_t *count) {
    Py_ssize_t most = s->nrelocs + s->nlabels + s->nbreaks + 1;
    if (s->widths)
        for (Py_ssize_t p = 0; p < s->n; p++) most += s->widths[p] != 0;
    int64_t *marks = PyMem_Malloc((size_t)most * sizeof(int64_t));
    if (!marks) { PyErr_NoMemory(); return NULL; }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < s->nrelocs; i++) marks[k++] = (int64_t)s->relocs[i].offset << 4 | MARK_SYMBOL;
    for (Py_ssize_t i = 0; i < s->nlabels; i++)
        if (!i || s->labels[i].offset != s->labels[i - 1].offset)
            marks[k++] = (int64_t)s->labels[i].offset << 4 | MARK_LABEL;
    if (s->hints) {
        for (Py_ssize_t i = 0; i < s->nbreaks; i++) marks[k++] = s->breaks[i] << 4 | MARK_BREAK;
        if (s->widths)
            for (Py_ssize_t p = 0; p < s->n; p++)
                if (s->widths[p]) marks[k++] = (int64_t)p << 4 | (MARK_FIELD + s->widths[p]);
    }
    if (sort_marks(marks, k) < 0) { PyMem_Free(marks); return NULL; }
    marks[k++] = (int64_t)(s->n + 1) << 4;
    *count = k;
    return marks;
}

/* A readable line's state: its directive's width (0: no open line), values and characters
 * (a comma each). */
typedef struct {
    Py_ssize_t width, values, length;
} open_line;

/* Plain bytes [pos, at) in the record layout: joined onto the open .b8 line or a new one
 * where they fit, else spread over as many lines as they take. */
static int readable_run(section *s, open_line *line, Py_ssize_t pos, Py_ssize_t at) {
    buffer *b = &s->out;
    const uint8_t *data = s->data;
    Py_ssize_t count = at - pos, length = 0;
    for (Py_ssize_t k = pos; k < at && length <= LINE; k++) length += dec_len[data[k]] + 1;
    int joins = line->width == 1 && line->length + length <= LINE && line->values + count <= MAX_VALUES;
    int fresh = !joins && length <= LINE && count <= MAX_VALUES;
    if (joins || fresh) {
        if (put(b, joins ? "," : "\n.b8 ", joins ? 1 : 5) < 0) return -1;
        for (Py_ssize_t k = pos; k < at; k++) {
            if (k > pos && put(b, ",", 1) < 0) return -1;
            if (put(b, dec_text[data[k]], dec_len[data[k]]) < 0) return -1;
        }
        line->length = joins ? line->length + length : length;
        line->values = joins ? line->values + count : count;
        line->width = 1;
        return 0;
    }
    if (line->width != 1) line->length = LINE, line->values = 0;
    for (Py_ssize_t k = pos; k < at; k++) {
        Py_ssize_t cost = dec_len[data[k]] + 1;
        if (line->length + cost > LINE || line->values >= MAX_VALUES) {
            if (put(b, "\n.b8 ", 5) < 0) return -1;
            line->length = line->values = 0;
        } else if (line->values && put(b, ",", 1) < 0) {
            return -1;
        }
        if (put(b, dec_text[data[k]], dec_len[data[k]]) < 0) return -1;
        line->length += cost;
        line->values++;
    }
    line->width = 1;
    return 0;
}

/* No label or symbol among the marks from marks[i] up to offset end. */
static int clear_to(const int64_t *marks, Py_ssize_t i, Py_ssize_t end) {
    for (; marks[i] >> 4 < end; i++)
        if ((marks[i] & 15) == MARK_LABEL || (marks[i] & 15) == MARK_SYMBOL) return 0;
    return 1;
}

static int readable_field(section *s, open_line *line, Py_ssize_t at, Py_ssize_t width) {
    uint64_t v = value_at(s->data, at, width);
    Py_ssize_t cost = digits10(v) + 1;
    buffer *b = &s->out;
    if (line->width != width || line->length + cost > LINE || line->values >= MAX_VALUES) {
        if (put_directive(b, width) < 0) return -1;
        line->length = cost;
        line->values = 1;
        line->width = width;
    } else {
        if (put(b, ",", 1) < 0) return -1;
        line->length += cost;
        line->values++;
    }
    return put_u64(b, v);
}

/* The reference's _readable_records (hints) and _readable_plain (none): one pass over the
 * marks. */
static int readable(section *s) {
    Py_ssize_t count;
    int64_t *marks = readable_marks(s, &count);
    if (!marks) return -1;
    buffer *b = &s->out;
    Py_ssize_t n = s->n, pos = 0, i = 0, li = 0, ri = 0;
    open_line line = {0, 0, 0};
    int result = -1;
    while (i < count) {
        int64_t m = marks[i];
        Py_ssize_t at = (Py_ssize_t)(m >> 4);
        if (at > n) at = n;
        if (pos < at) {
            if (s->hints) {
                if (readable_run(s, &line, pos, at) < 0) goto done;
            } else {
                for (Py_ssize_t k = pos; k < at; k += 30) {
                    Py_ssize_t stop = at - k < 30 ? at : k + 30;
                    if (put(b, "\n.b8 ", 5) < 0) goto done;
                    for (Py_ssize_t j = k; j < stop; j++) {
                        if (j > k && put(b, ",", 1) < 0) goto done;
                        if (put(b, dec_text[s->data[j]], dec_len[s->data[j]]) < 0) goto done;
                    }
                }
            }
            pos = at;
        } else if (at < pos) {
            i++;
            continue; /* inside a field or symbol already written */
        }
        if (at == n && (m >> 4) > n) break; /* the end mark */
        i++;
        int kind = (int)(m & 15);
        if (kind > MARK_FIELD) {
            Py_ssize_t width = kind - MARK_FIELD;
            if (width == 8 && wide_value_at(s, at) >= B64_LIMIT) width = 4;
            Py_ssize_t end = at + width;
            if (end <= n && ((marks[i] >> 4) >= end || clear_to(marks, i, end))) {
                if (readable_field(s, &line, at, width) < 0) goto done;
                pos = end;
            }
            continue;
        }
        line.width = 0;
        if (kind == MARK_SYMBOL) {
            while (s->relocs[ri].offset < at) ri++;
            if (put_symbol(b, &s->relocs[ri]) < 0) goto done;
            pos = at + s->relocs[ri].size;
        } else if (kind == MARK_LABEL) {
            while (s->labels[li].offset < at) li++;
            for (; li < s->nlabels && s->labels[li].offset == at; li++)
                if (put_label(b, &s->labels[li]) < 0) goto done;
        }
    }
    result = 0;
done:
    PyMem_Free(marks);
    return result;
}

/* --- the block ------------------------------------------------------------------------------ */

static int style_of(PyObject *style) {
    if (!style) return STYLE_READABLE;
    if (!PyUnicode_Check(style)) return -1;
    if (PyUnicode_CompareWithASCIIString(style, "readable") == 0) return STYLE_READABLE;
    if (PyUnicode_CompareWithASCIIString(style, "nvcc") == 0) return STYLE_NVCC;
    if (PyUnicode_CompareWithASCIIString(style, "compact") == 0) return STYLE_COMPACT;
    return -1;
}

static int write_block(section *s, PyObject *name, int style) {
    buffer *b = &s->out;
    int nvcc = style == STYLE_NVCC;
    if (put(b, nvcc ? "\t.section\t" : ".section ", nvcc ? 10 : 9) < 0 || put_str(b, name) < 0) return -1;
    if (put(b, nvcc ? "\n\t{" : "\n{", nvcc ? 3 : 2) < 0) return -1;
    int written;
    if (style == STYLE_NVCC) {
        written = walk_segments(s, nvcc_bytes, no_line, NULL);
    } else if (style == STYLE_COMPACT) {
        compact_state c = {0, 0, NULL, 0};
        written = walk_segments(s, compact_bytes, compact_close, &c);
        PyMem_Free(c.choice);
    } else {
        written = readable(s);
    }
    if (written < 0) return -1;
    return put(b, nvcc ? "\n\t}\n" : "\n}\n", nvcc ? 4 : 3);
}

static PyObject *attribute(PyObject *o, const char *name) {
    PyObject *value = PyObject_GetAttrString(o, name);
    if (!value) PyErr_Clear();
    return value;
}

static PyObject *format_section(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"image", "style", NULL};
    PyObject *image, *style = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:format_section", keywords, &image, &style)) return NULL;
    int which = style_of(style);
    if (which < 0) Py_RETURN_NONE;
    PyObject *name = attribute(image, "name"), *data = attribute(image, "data");
    PyObject *relocs = attribute(image, "relocs"), *labels = attribute(image, "labels");
    PyObject *fields = attribute(image, "fields"), *breaks = attribute(image, "breaks");
    PyObject *result = NULL;
    section s;
    memset(&s, 0, sizeof s);
    if (!name || !data || !relocs || !labels || !fields || !breaks || !is_ascii_str(name) ||
        !PyBytes_CheckExact(data) || !PyList_CheckExact(relocs) || !PyDict_CheckExact(labels) ||
        !PyDict_CheckExact(fields) || !PyList_CheckExact(breaks))
        goto done;
    s.data = (const uint8_t *)PyBytes_AS_STRING(data);
    s.n = PyBytes_GET_SIZE(data);
    if (read_parts(&s, relocs, labels, fields, breaks) < 0 || read_symbols(&s) < 0) goto done;
    if (write_block(&s, name, which) < 0) goto done;
    result = PyUnicode_New((Py_ssize_t)s.out.len, 127);
    if (result) memcpy(PyUnicode_1BYTE_DATA(result), s.out.data, s.out.len);
done:
    section_free(&s);
    Py_XDECREF(name);
    Py_XDECREF(data);
    Py_XDECREF(relocs);
    Py_XDECREF(labels);
    Py_XDECREF(fields);
    Py_XDECREF(breaks);
    if (!result && !PyErr_Occurred()) Py_RETURN_NONE;
    return result;
}

static PyMethodDef methods[] = {
    {"format_section", (PyCFunction)(void (*)(void))format_section, METH_VARARGS | METH_KEYWORDS,
     "The twin of ptxdwarf.ptx.writer.format_section."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "writer", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_writer(void) {
    for (int v = 0; v < 256; v++) dec_len[v] = (uint8_t)snprintf(dec_text[v], sizeof dec_text[v], "%d", v);
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "LINE", LINE) < 0 || PyModule_AddIntConstant(m, "MAX_VALUES", MAX_VALUES) < 0 ||
        PyModule_AddIntConstant(m, "SWITCH", SWITCH) < 0 ||
        PyModule_AddObject(m, "B64_LIMIT", PyLong_FromUnsignedLongLong(B64_LIMIT)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
