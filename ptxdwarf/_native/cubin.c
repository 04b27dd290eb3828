/* The cubin's bulk records: its section headers and symbols (ptxdwarf.cuda.cubin._section_list,
 * _symbol_list), its relocations applied (ptxdwarf.cuda.cubin._applied), the rows
 * of a line-number program (ptxdwarf.dwarf.lines._rows) and their text in a dump and in
 * dump --json (ptxdwarf.dump._program_lines, _program_rows_json), the lowest address of each of its lines
 * (ptxdwarf.dwarf.lines._scan_starts) and the entries of one function's
 * register map, in dump --json, and where they are (ptxdwarf.cuda.regmap._entries, _entries_json,
 * _sass_functions). Each function returns None on anything it
 * does not take, and its Python twin decides. */
#include "common.h"

/* Whether item cannot take part in a reference cycle, now or later: an int, a string, None,
 * or a record or Symbol this module made and untracked (see record and new_symbol). */
static int atomic(PyObject *item) {
    return item == Py_None || PyLong_CheckExact(item) || PyBool_Check(item) || PyUnicode_CheckExact(item) ||
           (PyObject_IS_GC(item) && !PyObject_GC_IsTracked(item) && !PyDict_Check(item) && !PyList_Check(item));
}

/* A new instance of the tuple subclass kind (a NamedTuple) holding the n items, which it
 * takes; NULL with an exception set. One whose items are all atomic is not tracked by the
 * garbage collector: CPython untracks such exact tuples, not those of a subclass, and every
 * full collection would walk the hundreds of thousands of them. */
static PyObject *record(PyTypeObject *kind, PyObject **items, Py_ssize_t n) {
    PyObject *out = kind->tp_alloc(kind, n);
    if (!out) {
        for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(items[i]);
        return NULL;
    }
    int failed = 0, untrack = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!items[i]) failed = 1;
        else if (!atomic(items[i])) untrack = 0;
        PyTuple_SET_ITEM(out, i, items[i]);
    }
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    if (untrack && PyObject_GC_IsTracked(out)) PyObject_GC_UnTrack(out);
    return out;
}

/* Whether kind is a tuple subclass (a NamedTuple: not tuple itself, which the references
 * cannot call with the fields) whose instances record() can make. */
static int record_kind(PyObject *kind) {
    return PyType_Check(kind) && kind != (PyObject *)&PyTuple_Type &&
           PyType_IsSubtype((PyTypeObject *)kind, &PyTuple_Type) &&
           ((PyTypeObject *)kind)->tp_itemsize == sizeof(PyObject *);
}

/* An int attribute of obj within [low, high] into *out; 0: not there or not such an int
 * (no exception left set), -1: an exception that must propagate. */
static int int_attr(PyObject *obj, const char *name, long long low, long long high, long long *out) {
    PyObject *value = PyObject_GetAttrString(obj, name);
    if (!value) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) { PyErr_Clear(); return 0; }
        return -1;
    }
    if (!PyLong_CheckExact(value) && !PyBool_Check(value)) { Py_DECREF(value); return 0; }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    Py_DECREF(value);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v < low || v > high) return 0;
    *out = v;
    return 1;
}

#define DECLINE(label) do { declined = 1; goto label; } while (0)

/* Python's data[pos:pos+n] read as a little-endian unsigned int, n <= 8 (a slice past the
 * end holds fewer bytes). */
static uint64_t le_slice(const uint8_t *data, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t n) {
    uint64_t v = 0;
    for (Py_ssize_t i = 0; i < n && pos + i < size; i++) v |= (uint64_t)data[pos + i] << (8 * i);
    return v;
}

typedef struct {
    uint64_t address, file, column, context, name;
    int64_t line;
    int is_stmt, has_name;
    PyObject *symbol; /* a reference: collecting the records made can run code that changes symbols */
} line_state;

static void line_reset(line_state *s, int default_is_stmt) {
    s->address = 0; s->file = 1; s->line = 1; s->column = 0; s->context = 0; s->name = 0;
    s->is_stmt = default_is_stmt; s->has_name = 0; Py_XSETREF(s->symbol, Py_NewRef(Py_None));
}

/* One row of a line-number program: the state when it was made, and its flags (ROW_*). */
typedef struct {
    uint64_t address, file, column, context, name;
    int64_t line;
    PyObject *symbol; /* a reference */
    uint8_t bits;
} line_row_c;

enum { ROW_STMT = 1, ROW_PROLOGUE_END = 2, ROW_EPILOGUE_BEGIN = 4, ROW_ENDS = 8, ROW_NAMED = 16 };

typedef struct {
    line_row_c *rows;
    size_t len, cap;
} row_list;

static int row_list_add(row_list *l, const line_state *s, int ends, int prologue_end, int epilogue_begin) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        if (cap > (size_t)PY_SSIZE_T_MAX / sizeof(line_row_c)) { PyErr_NoMemory(); return -1; }
        line_row_c *rows = PyMem_Realloc(l->rows, cap * sizeof(line_row_c));
        if (!rows) { PyErr_NoMemory(); return -1; }
        l->rows = rows;
        l->cap = cap;
    }
    line_row_c *row = &l->rows[l->len++];
    row->address = s->address; row->file = s->file; row->column = s->column;
    row->context = s->context; row->name = s->name; row->line = s->line;
    row->symbol = Py_NewRef(s->symbol);
    row->bits = (uint8_t)((s->is_stmt ? ROW_STMT : 0) | (prologue_end ? ROW_PROLOGUE_END : 0) |
                          (epilogue_begin ? ROW_EPILOGUE_BEGIN : 0) | (ends ? ROW_ENDS : 0) |
                          (s->has_name ? ROW_NAMED : 0));
    return 0;
}

static void row_list_free(row_list *l) {
    for (size_t i = 0; i < l->len; i++) Py_XDECREF(l->rows[i].symbol);
    PyMem_Free(l->rows);
    l->rows = NULL;
    l->len = l->cap = 0;
}

/* What the opcodes of a line program are read with: its header's fields and the operand
 * counts of its standard opcodes. */
typedef struct {
    long long opcode_base, line_base, line_range, step, default_is_stmt, base;
    uint8_t lengths[255];
    Py_ssize_t nlengths;
} line_header;

/* The fields of line program p and the operand counts lengths into *h; 1 done, 0 declined,
 * -1 an exception. */
static int read_line_header(PyObject *program, PyObject *lengths, line_header *h) {
    int got;
    h->base = 0;
    if ((got = int_attr(program, "opcode_base", 0, 255, &h->opcode_base)) != 1 ||
        (got = int_attr(program, "line_base", -128, 127, &h->line_base)) != 1 ||
        (got = int_attr(program, "line_range", 0, 255, &h->line_range)) != 1 ||
        (got = int_attr(program, "minimum_instruction_length", 0, 255, &h->step)) != 1 ||
        (got = int_attr(program, "default_is_stmt", 0, 1, &h->default_is_stmt)) != 1)
        return got;
    PyObject *str_offset = PyObject_GetAttrString(program, "str_offset");
    if (!str_offset) return -1;
    int offset_known = str_offset == Py_None;
    Py_DECREF(str_offset);
    if (!offset_known && (got = int_attr(program, "str_offset", 0, 0xFFFFFFFFLL, &h->base)) != 1) return got;
    if (!PyList_CheckExact(lengths)) return 0;
    h->nlengths = PyList_GET_SIZE(lengths);
    if (h->nlengths > 255) return 0;
    for (Py_ssize_t i = 0; i < h->nlengths; i++) {
        PyObject *item = PyList_GET_ITEM(lengths, i);
        if (!PyLong_CheckExact(item)) return 0;
        long v = PyLong_AsLong(item);
        if (v < 0 || v > 255) { PyErr_Clear(); return 0; }
        h->lengths[i] = (uint8_t)v;
    }
    return 1;
}

/* How many rows decode_rows made, and the widest of their flags (see FLAGS). */
typedef struct {
    size_t count;
    int widest; /* the flags (ROW_* bits) of the longest text */
} row_tally;

static int flags_length(int bits);

/* The rows the opcodes data[pos:end] of a program of header h make (symbols: what the address
 * at an offset was relocated against): into *out (NULL: only counted into *tally), stopping
 * after the first sequence that ends once out holds limit rows, where *stopped tells (end: it
 * did not stop); 1 done, 0 declined, -1 an exception. A sequence starts with the state a
 * program does: the rows from where it stopped are the rows a run from the start makes there. */
static int decode_rows(const uint8_t *data, Py_ssize_t size, Py_ssize_t pos, Py_ssize_t end,
                       const line_header *h, PyObject *symbols, row_list *out, size_t limit, Py_ssize_t *stopped,
                       row_tally *tally) {
    long long opcode_base = h->opcode_base, line_base = h->line_base, line_range = h->line_range;
    long long step = h->step, base = h->base;
    Py_ssize_t nlengths = h->nlengths;
    const uint8_t *lengths = h->lengths;
    int declined = 0, result = 1;
    line_state s = {.symbol = NULL};
    line_reset(&s, (int)h->default_is_stmt);
    int prologue_end = 0, epilogue_begin = 0;
    while (pos < end) {
        uint8_t op = data[pos++];
        int ends = -1; /* the row the opcode makes: 0 a row, 1 one that ends the sequence */
        cursor c = cursor_of(data, size, pos);
        int overflow = 0;
        if (op >= opcode_base) {
            if (line_range == 0) DECLINE(done);
            uint64_t adjusted = (uint64_t)(op - opcode_base);
            if (__builtin_add_overflow(s.address, (uint64_t)step * (adjusted / (uint64_t)line_range), &s.address) ||
                __builtin_add_overflow(s.line, line_base + (int64_t)(adjusted % (uint64_t)line_range), &s.line))
                DECLINE(done);
            ends = 0;
        } else if (op == 0) {
            uint64_t n = cursor_uleb(&c, &overflow);
            if (c.bad || overflow) DECLINE(done);
            pos = cursor_offset(&c);
            if (n == 0 || pos > end || n > (uint64_t)(end - pos)) DECLINE(done);
            uint8_t sub = data[pos];
            Py_ssize_t operands = pos + 1;
            pos += (Py_ssize_t)n;
            if (sub == 1) {
                ends = 1;
            } else if (sub == 2) {
                for (Py_ssize_t k = operands + 8; k < pos; k++)
                    if (data[k]) DECLINE(done); /* an address past 64 bits */
                s.address = le_slice(data, size, operands, n - 1 > 8 ? 8 : (Py_ssize_t)n - 1);
                PyObject *key = PyLong_FromSsize_t(operands);
                if (!key) goto fail;
                PyObject *found = PyDict_GetItemWithError(symbols, key);
                Py_DECREF(key);
                if (!found && PyErr_Occurred()) goto fail;
                Py_XSETREF(s.symbol, Py_NewRef(found ? found : Py_None));
            } else if (sub == 0x90 || sub == 0x91) { /* DW_LNE_NVIDIA_inlined_call, _set_function_name */
                cursor at = cursor_of(data, size, operands);
                uint64_t context = sub == 0x90 ? cursor_uleb(&at, &overflow) : s.context;
                uint64_t value = cursor_uleb(&at, &overflow);
                if (at.bad || overflow || __builtin_add_overflow(value, (uint64_t)base, &s.name)) DECLINE(done);
                s.context = context;
                s.has_name = 1;
            }
        } else if (op == 1) {
            ends = 0;
        } else if (op == 2) {
            uint64_t n = cursor_uleb(&c, &overflow), delta;
            if (c.bad || overflow || __builtin_mul_overflow((uint64_t)step, n, &delta) ||
                __builtin_add_overflow(s.address, delta, &s.address))
                DECLINE(done);
            pos = cursor_offset(&c);
        } else if (op == 3) {
            int64_t n = cursor_sleb(&c, &overflow);
            if (c.bad || overflow || __builtin_add_overflow(s.line, n, &s.line)) DECLINE(done);
            pos = cursor_offset(&c);
        } else if (op == 4 || op == 5) {
            uint64_t n = cursor_uleb(&c, &overflow);
            if (c.bad || overflow) DECLINE(done);
            if (op == 4) s.file = n; else s.column = n;
            pos = cursor_offset(&c);
        } else if (op == 6) {
            s.is_stmt = !s.is_stmt;
        } else if (op == 8) {
            if (line_range == 0) DECLINE(done);
            if (__builtin_add_overflow(s.address, (uint64_t)step * (uint64_t)((255 - opcode_base) / line_range),
                                       &s.address))
                DECLINE(done);
        } else if (op == 9) {
            if (__builtin_add_overflow(s.address, le_slice(data, size, pos, 2), &s.address)) DECLINE(done);
            pos += 2;
        } else if ((op == 10 || op == 11) && nlengths < op) {
            DECLINE(done); /* the reference's lengths[op - 1] fails */
        } else if (op == 10 && lengths[9] == 0) {
            prologue_end = 1;
        } else if (op == 11 && lengths[10] == 0) {
            epilogue_begin = 1;
        } else if (op != 7) {
            int count = op - 1 < nlengths ? lengths[op - 1] : 0;
            for (int i = 0; i < count; i++) cursor_uleb(&c, NULL);
            if (c.bad) DECLINE(done);
            pos = cursor_offset(&c);
        }
        if (ends >= 0) {
            if (out) {
                if (row_list_add(out, &s, ends, prologue_end, epilogue_begin) < 0) goto fail;
            } else if (tally) {
                int bits = (s.is_stmt ? ROW_STMT : 0) | (prologue_end ? ROW_PROLOGUE_END : 0) |
                           (epilogue_begin ? ROW_EPILOGUE_BEGIN : 0) | (ends ? ROW_ENDS : 0);
                if (flags_length(bits) > flags_length(tally->widest)) tally->widest = bits;
                tally->count++;
            }
            prologue_end = epilogue_begin = 0;
            if (ends) {
                line_reset(&s, (int)h->default_is_stmt);
                if (out && out->len >= limit) break;
            }
        }
    }
    if (stopped) *stopped = pos;
done:
    Py_XDECREF(s.symbol);
    return declined ? 0 : result;
fail:
    Py_XDECREF(s.symbol);
    return -1;
}

static PyObject *line_row(PyTypeObject *kind, const line_row_c *row) {
    PyObject *items[11] = {
        PyLong_FromUnsignedLongLong(row->address),
        PyLong_FromUnsignedLongLong(row->file),
        PyLong_FromLongLong(row->line),
        PyLong_FromUnsignedLongLong(row->column),
        PyBool_FromLong(row->bits & ROW_STMT),
        PyBool_FromLong(row->bits & ROW_ENDS),
        Py_NewRef(row->symbol),
        PyLong_FromUnsignedLongLong(row->context),
        row->bits & ROW_NAMED ? PyLong_FromUnsignedLongLong(row->name) : Py_NewRef(Py_None),
        PyBool_FromLong(row->bits & ROW_PROLOGUE_END),
        PyBool_FromLong(row->bits & ROW_EPILOGUE_BEGIN),
    };
    return record(kind, items, 11);
}

/* The rows of the opcodes data[pos:end] (pos and end: ints) of line program p into *out;
 * 1 done, 0 declined, -1 an exception. */
static int program_rows(PyObject *bytes, PyObject *pos_obj, PyObject *end_obj, PyObject *program,
                        PyObject *lengths, PyObject *symbols, row_list *out) {
    if (!PyBytes_CheckExact(bytes) || !PyLong_CheckExact(pos_obj) || !PyLong_CheckExact(end_obj) ||
        !PyDict_CheckExact(symbols))
        return 0;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(bytes);
    Py_ssize_t size = PyBytes_GET_SIZE(bytes);
    Py_ssize_t pos = PyLong_AsSsize_t(pos_obj), end = PyLong_AsSsize_t(end_obj);
    if ((pos == -1 || end == -1) && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    if (pos < 0 || end > size) return 0;
    line_header h;
    int got = read_line_header(program, lengths, &h);
    if (got != 1) return got;
    return decode_rows(data, size, pos, end, &h, symbols, out, (size_t)-1, NULL, NULL);
}

/* _rows(kind, data, pos, end, p, lengths, symbols): the rows of the opcodes data[pos:end]
 * of line program p as kind (LineRow) instances. */
static PyObject *rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !record_kind(args[0])) Py_RETURN_NONE;
    row_list found = {NULL, 0, 0};
    int got = program_rows(args[1], args[2], args[3], args[4], args[5], args[6], &found);
    if (got != 1) {
        row_list_free(&found);
        return got < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *out = PyList_New((Py_ssize_t)found.len);
    if (!out) goto fail;
    for (size_t i = 0; i < found.len; i++) {
        PyObject *row = line_row((PyTypeObject *)args[0], &found.rows[i]);
        if (!row) goto fail;
        PyList_SET_ITEM(out, (Py_ssize_t)i, row);
    }
    row_list_free(&found);
    return out;
fail:
    Py_XDECREF(out);
    row_list_free(&found);
    return NULL;
}

/* A row's flags as llvm-dwarfdump names them, by its bits ROW_STMT, ROW_PROLOGUE_END,
 * ROW_EPILOGUE_BEGIN and ROW_ENDS (ptxdwarf.dump._flags_text). */
static const char *const FLAGS[16] = {
    "",
    "is_stmt",
    "prologue_end",
    "is_stmt prologue_end",
    "epilogue_begin",
    "is_stmt epilogue_begin",
    "prologue_end epilogue_begin",
    "is_stmt prologue_end epilogue_begin",
    "end_sequence",
    "is_stmt end_sequence",
    "prologue_end end_sequence",
    "is_stmt prologue_end end_sequence",
    "epilogue_begin end_sequence",
    "is_stmt epilogue_begin end_sequence",
    "prologue_end epilogue_begin end_sequence",
    "is_stmt prologue_end epilogue_begin end_sequence",
};

static int flags_length(int bits) { return (int)strlen(FLAGS[bits & 15]); }

/* f"{value or fallback}" (fallback: a C string), or NULL for an empty text. */
static PyObject *text_or(PyObject *value, const char *fallback, int *failed) {
    int truth = PyObject_IsTrue(value);
    if (truth < 0) { *failed = 1; return NULL; }
    if (!truth) {
        if (!*fallback) return NULL;
        PyObject *out = PyUnicode_FromString(fallback);
        if (!out) *failed = 1;
        return out;
    }
    PyObject *out = PyUnicode_CheckExact(value) ? Py_NewRef(value) : PyObject_Format(value, NULL);
    if (!out) *failed = 1;
    return out;
}

/* UTF-8 of text into b, a lone surrogate (of a name decoded with surrogateescape) as
 * surrogatepass writes it; -1 with an exception set. */
static int put_text(buffer *b, PyObject *text) {
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8) return buffer_put(b, utf8, (size_t)n);
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
    PyErr_Clear();
    PyObject *bytes = PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (!bytes) return -1;
    int r = buffer_put(b, PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
    Py_DECREF(bytes);
    return r;
}

/* One row's line into b, ended by a newline: the prefix head (n ASCII bytes) and where
 * (NULL: nothing), stripped of the whitespace at its end as str.rstrip does. */
static int put_row_text(buffer *b, char *head, Py_ssize_t n, PyObject *where) {
    Py_ssize_t length = where ? PyUnicode_GET_LENGTH(where) : 0;
    if (length && PyUnicode_IS_ASCII(where)) {
        const char *tail = (const char *)PyUnicode_1BYTE_DATA(where);
        while (length > 0 && Py_UNICODE_ISSPACE((Py_UCS4)(unsigned char)tail[length - 1])) length--;
        if (length) {
            if (buffer_put(b, head, (size_t)n) < 0 || buffer_put(b, tail, (size_t)length) < 0) return -1;
            return buffer_byte(b, '\n');
        }
    }
    if (length == 0) {
        while (n > 0 && Py_UNICODE_ISSPACE((Py_UCS4)(unsigned char)head[n - 1])) n--;
        if (buffer_put(b, head, (size_t)n) < 0) return -1;
        return buffer_byte(b, '\n');
    }
    if (buffer_put(b, head, (size_t)n) < 0) return -1;
    if (!Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(where, length - 1))) {
        if (put_text(b, where) < 0) return -1;
        return buffer_byte(b, '\n');
    }
    PyObject *stripped = PyObject_CallMethod(where, "rstrip", NULL);
    if (!stripped) return -1;
    if (PyUnicode_GET_LENGTH(stripped) == 0) {
        /* all of it was whitespace: so is the end of head, which rstrip takes off too */
        Py_DECREF(stripped);
        b->len -= (size_t)n;
        while (n > 0 && Py_UNICODE_ISSPACE((Py_UCS4)(unsigned char)head[n - 1])) n--;
        if (buffer_put(b, head, (size_t)n) < 0) return -1;
        return buffer_byte(b, '\n');
    }
    int r = put_text(b, stripped);
    Py_DECREF(stripped);
    return r < 0 ? -1 : buffer_byte(b, '\n');
}

/* A program's rows, made chunk at a time: as one text of the lines the text dump shows them
 * in, each ended by a newline (ptxdwarf.dump._rows_lines: the heading, one line per row, an
 * empty line); or, quote
 * (json.dumps) given, as one text of the items of dump --json's array of them
 * (ptxdwarf.dump._rows_json). */
typedef struct {
    PyObject_HEAD
    PyObject *data, *symbols; /* the opcodes' bytes and their relocated offsets */
    line_header header;
    Py_ssize_t pos, end; /* the opcodes of the rows not read yet */
    row_list rows;       /* whole sequences of rows, the first row number first */
    size_t first;
    size_t count;        /* the program's rows */
    PyObject *string_at;
    PyObject *quote;                     /* json.dumps, for the strings of the JSON rows */
    PyObject *symbol_seen, *symbol_text; /* the last symbol quoted, and its text */
    PyObject *name_text;                 /* the last function's name quoted (None: no name) */
    uint64_t name_seen;
    int name_known, name_given;
    Py_ssize_t chunk;
    size_t next;  /* the next item to make: lines 0 and 1 the heading, 2 + i row i, then the empty line */
    size_t start; /* the first row of the sequence of the next row */
    int width;
} row_lines;

static void row_lines_dealloc(row_lines *self) {
    row_list_free(&self->rows);
    Py_XDECREF(self->data);
    Py_XDECREF(self->symbols);
    Py_XDECREF(self->string_at);
    Py_XDECREF(self->quote);
    Py_XDECREF(self->symbol_seen);
    Py_XDECREF(self->symbol_text);
    Py_XDECREF(self->name_text);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Row i of the program (the rows are asked for in order), read when first asked for; NULL
 * with an exception set. */
static const line_row_c *row_at(row_lines *self, size_t i) {
    if (i >= self->first + self->rows.len) {
        for (size_t k = 0; k < self->rows.len; k++) Py_CLEAR(self->rows.rows[k].symbol);
        self->first += self->rows.len;
        self->rows.len = 0;
        const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(self->data);
        int got = decode_rows(data, PyBytes_GET_SIZE(self->data), self->pos, self->end, &self->header,
                              self->symbols, &self->rows, (size_t)self->chunk, &self->pos, NULL);
        if (got == 0 || (got == 1 && i >= self->first + self->rows.len))
            PyErr_SetString(PyExc_RuntimeError, "a line program's opcodes read differently the second time");
        if (got != 1 || i >= self->first + self->rows.len) return NULL;
    }
    return &self->rows.rows[i - self->first];
}

/* The digits of n (negative: after a minus sign), right-aligned in width columns, at out;
 * where they end. */
static char *put_decimal(char *out, uint64_t n, int negative, int width) {
    char digits[21];
    int k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    for (int pad = width - k - negative; pad > 0; pad--) *out++ = ' ';
    if (negative) *out++ = '-';
    while (k) *out++ = digits[--k];
    return out;
}

/* The line of row i into b (and where its sequence starts, self->start, moved past it); -1
 * with an exception set. */
static int put_row_line(row_lines *self, size_t i, buffer *b) {
    const line_row_c *row = row_at(self, i);
    if (!row) return -1;
    /* f"0x{address:016x} {line:6} {column:6} {file:6} {flags:{width}} " */
    char head[160], *at = head;
    *at++ = '0';
    *at++ = 'x';
    for (int shift = 60; shift >= 0; shift -= 4) *at++ = "0123456789abcdef"[(row->address >> shift) & 15];
    *at++ = ' ';
    int64_t number = row->line;
    at = put_decimal(at, number < 0 ? (uint64_t)0 - (uint64_t)number : (uint64_t)number, number < 0, 6);
    *at++ = ' ';
    at = put_decimal(at, row->column, 0, 6);
    *at++ = ' ';
    at = put_decimal(at, row->file, 0, 6);
    *at++ = ' ';
    const char *flags = FLAGS[row->bits & 15];
    size_t length = strlen(flags);
    memcpy(at, flags, length);
    at += length;
    for (int pad = self->width - (int)length; pad > 0; pad--) *at++ = ' ';
    *at++ = ' ';
    Py_ssize_t k = at - head;
    PyObject *where = NULL;
    int failed = 0;
    if (row->context) {
        PyObject *name = row->bits & ROW_NAMED ? PyLong_FromUnsignedLongLong(row->name) : Py_NewRef(Py_None);
        if (!name) return -1;
        PyObject *found = PyObject_CallOneArg(self->string_at, name);
        Py_DECREF(name);
        if (!found) return -1;
        PyObject *function = text_or(found, "?", &failed);
        Py_DECREF(found);
        if (failed) return -1;
        if (row->context - 1 < i - self->start) { /* the call is a row before this one in its sequence */
            const line_row_c *call = &self->rows.rows[self->start + row->context - 1 - self->first];
            where = PyUnicode_FromFormat("%U inlined at file %llu line %lld", function,
                                         (unsigned long long)call->file, (long long)call->line);
        } else {
            where = PyUnicode_FromFormat("%U (context %llu)", function, (unsigned long long)row->context);
        }
        Py_DECREF(function);
        if (!where) return -1;
    } else {
        where = text_or(row->symbol, "", &failed);
        if (failed) return -1;
    }
    int r = put_row_text(b, head, k, where);
    Py_XDECREF(where);
    if (r == 0 && row->bits & ROW_ENDS) self->start = i + 1;
    return r;
}

/* quote(value) into b, as UTF-8; -1 with an exception set. */
static int put_quoted(buffer *b, PyObject *quoted) {
    if (!PyUnicode_Check(quoted)) {
        PyErr_SetString(PyExc_TypeError, "quote must return a str");
        return -1;
    }
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(quoted, &n);
    return text ? buffer_put(b, text, (size_t)n) : -1;
}

/* The JSON object of row i into b (see ptxdwarf.dump._line_rows_json), and where its
 * sequence starts, self->start, moved past it. */
static int put_json_row(row_lines *self, size_t i, buffer *b) {
    const line_row_c *row = row_at(self, i);
    if (!row) return -1;
    static const char *const truth[2] = {"false", "true"};
    char head[256], *at = head;
#define PUT(text) (memcpy(at, text, sizeof(text) - 1), at += sizeof(text) - 1)
    PUT("{\"address\": ");
    at = put_decimal(at, row->address, 0, 0);
    PUT(", \"file\": ");
    at = put_decimal(at, row->file, 0, 0);
    PUT(", \"line\": ");
    int64_t number = row->line;
    at = put_decimal(at, number < 0 ? (uint64_t)0 - (uint64_t)number : (uint64_t)number, number < 0, 0);
    PUT(", \"column\": ");
    at = put_decimal(at, row->column, 0, 0);
    at += sprintf(at, ", \"is_stmt\": %s, \"prologue_end\": %s, \"epilogue_begin\": %s, \"end_sequence\": %s",
                  truth[!!(row->bits & ROW_STMT)], truth[!!(row->bits & ROW_PROLOGUE_END)],
                  truth[!!(row->bits & ROW_EPILOGUE_BEGIN)], truth[!!(row->bits & ROW_ENDS)]);
    if (buffer_put(b, head, (size_t)(at - head)) < 0) return -1;
    if (row->symbol != Py_None) {
        if (row->symbol != self->symbol_seen) {
            PyObject *text = PyObject_CallOneArg(self->quote, row->symbol);
            if (!text) return -1;
            Py_XSETREF(self->symbol_text, text);
            Py_XSETREF(self->symbol_seen, Py_NewRef(row->symbol));
        }
        if (buffer_put(b, ", \"symbol\": ", 12) < 0 || put_quoted(b, self->symbol_text) < 0) return -1;
    }
    if (row->context) {
        at = head;
        PUT(", \"context\": ");
        at = put_decimal(at, row->context, 0, 0);
        if (row->context - 1 < i - self->start) {
            PUT(", \"inlined_at\": ");
            at = put_decimal(at, self->start + row->context - 1, 0, 0);
        }
        if (buffer_put(b, head, (size_t)(at - head)) < 0) return -1;
        int named = (row->bits & ROW_NAMED) != 0;
        if (!self->name_known || named != self->name_given || (named && row->name != self->name_seen)) {
            PyObject *offset = named ? PyLong_FromUnsignedLongLong(row->name) : Py_NewRef(Py_None);
            if (!offset) return -1;
            PyObject *found = PyObject_CallOneArg(self->string_at, offset);
            Py_DECREF(offset);
            if (!found) return -1;
            PyObject *text = found == Py_None ? Py_NewRef(Py_None) : PyObject_CallOneArg(self->quote, found);
            Py_DECREF(found);
            if (!text) return -1;
            Py_XSETREF(self->name_text, text);
            self->name_known = 1;
            self->name_given = named;
            self->name_seen = row->name;
        }
        if (self->name_text != Py_None &&
            (buffer_put(b, ", \"function\": ", 14) < 0 || put_quoted(b, self->name_text) < 0))
            return -1;
    }
#undef PUT
    if (buffer_byte(b, '}') < 0) return -1;
    if (row->bits & ROW_ENDS) self->start = i + 1;
    return 0;
}

/* Rows next to stop as the text of one chunk of the JSON array (after the first, from ", "). */
static PyObject *json_rows(row_lines *self, size_t stop) {
    buffer b = {NULL, 0, 0};
    for (size_t i = self->next; i < stop; i++) {
        if ((i && buffer_put(&b, ", ", 2) < 0) || put_json_row(self, i, &b) < 0) {
            buffer_free(&b);
            return NULL;
        }
    }
    PyObject *out = PyUnicode_DecodeUTF8((const char *)b.data, (Py_ssize_t)b.len, "surrogatepass");
    buffer_free(&b);
    return out;
}

static PyObject *row_lines_next(row_lines *self) {
    size_t n = self->count, total = self->quote ? n : n + 3;
    if (self->next >= total) return NULL;
    size_t stop = total - self->next < (size_t)self->chunk ? total : self->next + (size_t)self->chunk;
    if (self->quote) {
        PyObject *text = json_rows(self, stop);
        self->next = text ? stop : total; /* an iterator that failed is done */
        return text;
    }
    buffer b = {NULL, 0, 0};
    char head[160];
    int r = 0;
    for (size_t j = self->next; j < stop && r == 0; j++) {
        if (j == 0) {
            int k = snprintf(head, sizeof head, "Address            Line   Column File   %-*s Function\n", self->width,
                             "Flags");
            r = buffer_put(&b, head, (size_t)k);
        } else if (j == 1) {
            memcpy(head, "------------------ ------ ------ ------ ", 40);
            memset(head + 40, '-', (size_t)self->width);
            memcpy(head + 40 + self->width, " --------\n", 10);
            r = buffer_put(&b, head, (size_t)(40 + self->width + 10));
        } else if (j < n + 2) {
            r = put_row_line(self, j - 2, &b);
        } else {
            r = buffer_byte(&b, '\n');
        }
    }
    PyObject *out = r < 0 ? NULL : PyUnicode_DecodeUTF8((const char *)b.data, (Py_ssize_t)b.len, "surrogatepass");
    buffer_free(&b);
    self->next = out ? stop : total; /* an iterator that failed is done */
    return out;
}

static PyTypeObject row_lines_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ptxdwarf._native.cubin.RowLines",
    .tp_basicsize = sizeof(row_lines),
    .tp_dealloc = (destructor)row_lines_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A line-number program's rows as the text dump or dump --json writes them, a chunk at a time.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)row_lines_next,
};

/* The rows of line program p's opcodes (a LineOpcodes: data, start, end, lengths, symbols),
 * read now, to be made chunk at a time as the lines the text dump shows them in or (quote
 * given) as dump --json writes them, each chunk read again when made; Py_None: declined. */
static PyObject *row_chunks(PyObject *opcodes, PyObject *program, PyObject *string_at, PyObject *quote,
                            PyObject *chunk_obj) {
    if (!PyTuple_Check(opcodes) || PyTuple_GET_SIZE(opcodes) != 5 || !PyLong_CheckExact(chunk_obj))
        Py_RETURN_NONE;
    Py_ssize_t chunk = PyLong_AsSsize_t(chunk_obj);
    if (chunk == -1 && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    if (chunk < 1) Py_RETURN_NONE;
    PyObject *bytes = PyTuple_GET_ITEM(opcodes, 0), *pos_obj = PyTuple_GET_ITEM(opcodes, 1);
    PyObject *end_obj = PyTuple_GET_ITEM(opcodes, 2), *symbols = PyTuple_GET_ITEM(opcodes, 4);
    if (!PyBytes_CheckExact(bytes) || !PyLong_CheckExact(pos_obj) || !PyLong_CheckExact(end_obj) ||
        !PyDict_CheckExact(symbols))
        Py_RETURN_NONE;
    Py_ssize_t size = PyBytes_GET_SIZE(bytes);
    Py_ssize_t pos = PyLong_AsSsize_t(pos_obj), end = PyLong_AsSsize_t(end_obj);
    if ((pos == -1 || end == -1) && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    if (pos < 0 || end > size) Py_RETURN_NONE;
    line_header h;
    int got = read_line_header(program, PyTuple_GET_ITEM(opcodes, 3), &h);
    if (got != 1) return got < 0 ? NULL : Py_NewRef(Py_None);
    row_tally tally = {0, 0};
    got = decode_rows((const uint8_t *)PyBytes_AS_STRING(bytes), size, pos, end, &h, symbols, NULL, 0, NULL, &tally);
    if (got != 1) return got < 0 ? NULL : Py_NewRef(Py_None);
    row_lines *out = PyObject_New(row_lines, &row_lines_type);
    if (!out) return NULL;
    out->data = Py_NewRef(bytes);
    out->symbols = Py_NewRef(symbols);
    out->header = h;
    out->pos = pos;
    out->end = end;
    out->rows = (row_list){NULL, 0, 0};
    out->first = 0;
    out->count = tally.count;
    out->string_at = Py_XNewRef(string_at);
    out->quote = Py_XNewRef(quote);
    out->symbol_seen = out->symbol_text = out->name_text = NULL;
    out->name_seen = 0;
    out->name_known = out->name_given = 0;
    out->chunk = chunk;
    out->next = out->start = 0;
    out->width = flags_length(tally.widest) > 19 ? flags_length(tally.widest) : 19;
    return (PyObject *)out;
}

/* _program_lines(opcodes, p, string_at, chunk): the lines the text dump shows the rows of line
 * program p's opcodes in, read now, an iterator of texts of at most chunk lines, each ended by
 * a newline (ptxdwarf.dump._program_lines). */
static PyObject *program_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) Py_RETURN_NONE;
    return row_chunks(args[0], args[1], args[2], NULL, args[3]);
}

/* _program_rows_json(opcodes, p, string_at, encode, chunk): the rows of line program p's
 * opcodes as the items of dump --json's array, read now, an iterator of texts of at most
 * chunk rows (ptxdwarf.dump._program_rows_json). */
static PyObject *program_rows_json(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyCallable_Check(args[3])) Py_RETURN_NONE;
    return row_chunks(args[0], args[1], args[2], args[3], args[4]);
}

/* The fields of entry i of a register map whose entries' names are at spans of data (see
 * ptxdwarf.cuda.regmap._entries) into *e; 0 where the kernels decline. */
typedef struct {
    Py_ssize_t start, stop;
    uint32_t reg, low, high, piece;
} map_entry;

static int map_entry_at(const uint8_t *data, Py_ssize_t size, const uint8_t *spans, Py_ssize_t n, Py_ssize_t i,
                        map_entry *e) {
    cursor at = cursor_of(spans, n * 16, i * 16);
    uint64_t first = cursor_fixed(&at, 8), last = cursor_fixed(&at, 8);
    if (first < 4 || last < first || size < 13 || last > (uint64_t)(size - 13)) return 0;
    e->start = (Py_ssize_t)first;
    e->stop = (Py_ssize_t)last;
    for (Py_ssize_t k = e->start; k < e->stop; k++)
        if (data[k] >= 0x80) return 0;
    cursor c = cursor_of(data, size, e->stop + 1);
    e->reg = (uint32_t)cursor_fixed(&c, 4);
    e->low = (uint32_t)cursor_fixed(&c, 4);
    e->high = (uint32_t)cursor_fixed(&c, 4);
    cursor p = cursor_of(data, size, e->start - 4);
    e->piece = (uint32_t)cursor_fixed(&p, 4);
    return 1;
}

/* _entries(kind, data, spans, types, where): every entry of one function's register map as kind
 * (RegisterMapEntry) instances, a tuple. */
static PyObject *entries(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyBytes_CheckExact(args[2]) ||
        PyBytes_GET_SIZE(args[2]) % 16 || (args[3] != Py_None && !PyBytes_CheckExact(args[3])))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0];
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    PyObject *types = args[3];
    const uint8_t *spans = (const uint8_t *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[2]) / 16;
    if (types != Py_None && PyBytes_GET_SIZE(types) < n) Py_RETURN_NONE;
    const uint8_t *codes = types != Py_None ? (const uint8_t *)PyBytes_AS_STRING(types) : NULL;
    PyObject *out = PyTuple_New(n);
    PyObject *names = PyDict_New();
    if (!out || !names) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        map_entry e;
        if (!map_entry_at(data, size, spans, n, i, &e)) goto decline;
        PyObject *name = PyUnicode_DecodeASCII((const char *)data + e.start, e.stop - e.start, NULL);
        if (!name) goto fail;
        PyObject *shared = PyDict_SetDefault(names, name, name);
        Py_XINCREF(shared);
        Py_DECREF(name);
        if (!shared) goto fail;
        PyObject *items[7] = {
            shared,
            PyLong_FromUnsignedLong(e.reg >> 24),
            PyLong_FromUnsignedLong(e.reg & 0xFFFFFF),
            PyLong_FromUnsignedLong(e.low),
            PyLong_FromUnsignedLong(e.high),
            PyLong_FromUnsignedLong(e.piece),
            codes ? PyLong_FromLong(codes[i]) : Py_NewRef(Py_None),
        };
        PyObject *entry = record(kind, items, 7);
        if (!entry) goto fail;
        PyTuple_SET_ITEM(out, i, entry);
    }
    Py_DECREF(names);
    return out;
decline:
    Py_XDECREF(out);
    Py_XDECREF(names);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(out);
    Py_XDECREF(names);
    return NULL;
}

/* encode(getattr(entry, name)) of the entry kind(ptx, e's fields, code). */
static PyObject *entry_text(PyTypeObject *kind, PyObject *ptx, const map_entry *e, PyObject *code, const char *name,
                            PyObject *encode) {
    PyObject *items[7] = {Py_NewRef(ptx), PyLong_FromUnsignedLong(e->reg >> 24),
                          PyLong_FromUnsignedLong(e->reg & 0xFFFFFF), PyLong_FromUnsignedLong(e->low),
                          PyLong_FromUnsignedLong(e->high), PyLong_FromUnsignedLong(e->piece), Py_NewRef(code)};
    PyObject *entry = record(kind, items, 7);
    if (!entry) return NULL;
    PyObject *value = PyObject_GetAttrString(entry, name);
    Py_DECREF(entry);
    if (!value) return NULL;
    PyObject *text = PyObject_CallOneArg(encode, value);
    Py_DECREF(value);
    return text;
}

/* _entries_json(kind, data, spans, types, where, encode): the entries of _entries as the items
 * of dump --json's array of them (ptxdwarf.cuda.regmap._entries_json). Each PTX name, SASS
 * register and type is written by encode once (the SASS name and type as kind's properties
 * give them). */
static PyObject *entries_json(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyBytes_CheckExact(args[2]) ||
        PyBytes_GET_SIZE(args[2]) % 16 || (args[3] != Py_None && !PyBytes_CheckExact(args[3])) ||
        !PyCallable_Check(args[5]))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0];
    PyObject *encode = args[5], *types = args[3];
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    const uint8_t *spans = (const uint8_t *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[2]) / 16;
    if (types != Py_None && PyBytes_GET_SIZE(types) < n) Py_RETURN_NONE;
    const uint8_t *codes = types != Py_None ? (const uint8_t *)PyBytes_AS_STRING(types) : NULL;
    map_entry *found = PyMem_Malloc((n ? (size_t)n : 1) * sizeof(map_entry));
    if (!found) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!map_entry_at(data, size, spans, n, i, &found[i])) {
            PyMem_Free(found);
            Py_RETURN_NONE;
        }
    }
    PyObject *out = NULL, *names = PyDict_New(), *sass = PyDict_New(), *typed[257] = {NULL};
    buffer b = {NULL, 0, 0};
    if (!names || !sass) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        const map_entry *e = &found[i];
        PyObject *ptx = PyUnicode_DecodeASCII((const char *)data + e->start, e->stop - e->start, NULL);
        if (!ptx) goto done;
        PyObject *ptx_text = PyDict_GetItemWithError(names, ptx); /* borrowed */
        if (!ptx_text && !PyErr_Occurred()) {
            PyObject *text = PyObject_CallOneArg(encode, ptx);
            int put = text ? PyDict_SetItem(names, ptx, text) : -1;
            Py_XDECREF(text);
            ptx_text = put < 0 ? NULL : PyDict_GetItemWithError(names, ptx);
        }
        PyObject *code = codes ? PyLong_FromLong(codes[i]) : Py_NewRef(Py_None);
        PyObject *reg = code ? PyLong_FromUnsignedLong(e->reg) : NULL;
        PyObject *sass_text = ptx_text && reg ? PyDict_GetItemWithError(sass, reg) : NULL;
        if (ptx_text && reg && !sass_text && !PyErr_Occurred()) {
            PyObject *text = entry_text(kind, ptx, e, code, "sass", encode);
            int put = text ? PyDict_SetItem(sass, reg, text) : -1;
            Py_XDECREF(text);
            sass_text = put < 0 ? NULL : PyDict_GetItemWithError(sass, reg);
        }
        int slot = codes ? codes[i] : 256;
        if (sass_text && !typed[slot]) typed[slot] = entry_text(kind, ptx, e, code, "ptx_type", encode);
        Py_DECREF(ptx);
        Py_XDECREF(code);
        Py_XDECREF(reg);
        if (!sass_text || !typed[slot]) goto done;
        /* f'{{"ptx": {ptx}, "sass": {sass}, "low_pc": {low}, "high_pc": {high}, "piece": {piece}, "type": {type}}}' */
        char head[96];
        if ((i && buffer_put(&b, ", ", 2) < 0) || buffer_put(&b, "{\"ptx\": ", 8) < 0 || put_quoted(&b, ptx_text) < 0 ||
            buffer_put(&b, ", \"sass\": ", 10) < 0 || put_quoted(&b, sass_text) < 0)
            goto done;
        int k = snprintf(head, sizeof head, ", \"low_pc\": %lu, \"high_pc\": %lu, \"piece\": %lu, \"type\": ",
                         (unsigned long)e->low, (unsigned long)e->high, (unsigned long)e->piece);
        if (buffer_put(&b, head, (size_t)k) < 0 || put_quoted(&b, typed[slot]) < 0 || buffer_byte(&b, '}') < 0)
            goto done;
    }
    out = PyUnicode_DecodeUTF8((const char *)b.data, (Py_ssize_t)b.len, "surrogatepass");
done:
    buffer_free(&b);
    PyMem_Free(found);
    Py_XDECREF(names);
    Py_XDECREF(sass);
    for (int i = 0; i < 257; i++) Py_XDECREF(typed[i]);
    return out;
}

/* A Symbol made for a (symbol index, addend) of a section's relocations, and its value. */
typedef struct {
    uint64_t index, value;
    int64_t addend;
    PyObject *symbol; /* NULL: a free slot */
} symbol_slot;

/* The Symbols made lately, by (index, addend): a direct-mapped cache. ptxas names a symbol
 * and addend again a few relocations later (a location list's end is the next one's start), so
 * 1024 slots share nearly all of them (83,371 Symbols for the 83,012 pairs of the benchmark's
 * .debug_loc) where a table of every pair would be megabytes to fault in and walk. */
enum { SYMBOL_CACHE = 1024 };

static size_t slot_of(uint64_t index, int64_t addend) {
    uint64_t h = index * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)addend + 0x632BE59BD9B4E019ULL);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (size_t)h & (SYMBOL_CACHE - 1);
}

static void symbols_free(symbol_slot *cache) {
    if (!cache) return;
    for (size_t i = 0; i < SYMBOL_CACHE; i++) Py_XDECREF(cache[i].symbol);
    PyMem_Free(cache);
}

/* A new Symbol(name, addend, value) of the cubin's relocations (see new_symbol); one int holds
 * both numbers where they are equal (a symbol at 0). */
static PyObject *make_symbol(PyTypeObject *type, const symbol_fields *fields, PyObject *name, int64_t addend,
                             uint64_t value) {
    PyObject *number = PyLong_FromLongLong(addend);
    PyObject *stored = !number                                         ? NULL
                       : addend >= 0 && (uint64_t)addend == value ? Py_NewRef(number)
                                                                   : PyLong_FromUnsignedLongLong(value);
    return new_symbol(type, fields, Py_NewRef(name), number, stored);
}

typedef struct {
    uint64_t offset;
    PyObject *reloc;
} placed;

/* Sorts n items by offset, keeping the order of equal ones; scratch holds n. Items in
 * strictly falling order (ptxas writes a debug section's relocations last offset first) are
 * reversed. */
static void sort_placed(placed *items, placed *scratch, size_t n) {
    size_t falling = 1;
    while (falling < n && items[falling].offset < items[falling - 1].offset) falling++;
    if (falling == n) {
        for (size_t a = 0, b = n - 1; a < b; a++, b--) {
            placed t = items[a];
            items[a] = items[b];
            items[b] = t;
        }
        return;
    }
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) scratch[k++] = items[b].offset < items[a].offset ? items[b++] : items[a++];
            while (a < mid) scratch[k++] = items[a++];
            while (b < hi) scratch[k++] = items[b++];
        }
        memcpy(items, scratch, n * sizeof(placed));
    }
}

/* _applied(reloc, symbol, raw, entries, rela, elf64, little, values, names, decoded, where):
 * raw with the relocations of entries applied, the relocations as reloc instances (sorted by
 * offset), the count of each type and the indices of the symbols named. */
static PyObject *applied(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* The symbol type must be a class defined in Python, as the record kind is: untracking
     * one of its instances is safe only where the type's deallocator untracks with the
     * checking call (a built-in type's may untrack unconditionally, and crash). */
    if (nargs != 11 || !record_kind(args[0]) || !PyType_Check(args[1]) ||
        !PyType_HasFeature((PyTypeObject *)args[1], Py_TPFLAGS_HEAPTYPE) ||
        ((PyTypeObject *)args[1])->tp_dealloc != ((PyTypeObject *)args[0])->tp_dealloc || !PyBytes_CheckExact(args[2]) ||
        !PyBytes_CheckExact(args[3]) || !PyBool_Check(args[4]) || !PyBool_Check(args[5]) ||
        args[6] != Py_True || !PyList_CheckExact(args[7]) || !PyList_CheckExact(args[8]) ||
        !PyBool_Check(args[9]))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0], *symbol_type = (PyTypeObject *)args[1];
    PyObject *raw = args[2], *names = args[8];
    symbol_fields fields;
    if (symbol_fields_of(symbol_type, &fields) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const uint8_t *source = (const uint8_t *)PyBytes_AS_STRING(raw);
    uint64_t limit = (uint64_t)PyBytes_GET_SIZE(raw);
    const uint8_t *entries = (const uint8_t *)PyBytes_AS_STRING(args[3]);
    Py_ssize_t length = PyBytes_GET_SIZE(args[3]);
    int rela = args[4] == Py_True, elf64 = args[5] == Py_True, decoded = args[9] == Py_True;
    Py_ssize_t width = elf64 ? (rela ? 24 : 16) : (rela ? 12 : 8);
    Py_ssize_t count = PyList_GET_SIZE(args[7]);
    if (length % width || PyList_GET_SIZE(names) != count) Py_RETURN_NONE;
    size_t n = (size_t)(length / width);

    PyObject *out = NULL, *data = NULL, *relocs = NULL, *by_type = NULL, *named = NULL;
    uint64_t *values = PyMem_Malloc((count ? (size_t)count : 1) * sizeof(uint64_t));
    placed *found = PyMem_Malloc((n ? n : 1) * sizeof(placed));
    size_t made = 0;
    symbol_slot *table = PyMem_Calloc(SYMBOL_CACHE, sizeof(symbol_slot));
    uint8_t *named_index = PyMem_Calloc(count ? (size_t)count : 1, 1);
    int declined = 0;
    if (!values || !found || !table || !named_index) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *value = PyList_GET_ITEM(args[7], i);
        if (!PyLong_CheckExact(value) || !PyUnicode_CheckExact(PyList_GET_ITEM(names, i))) DECLINE(fail);
        values[i] = PyLong_AsUnsignedLongLong(value);
        if (values[i] == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); DECLINE(fail); }
    }
    uint64_t types[5] = {0};
    int order[4], seen = 0, in_order = 1;
    uint64_t last = 0;
    uint8_t *bytes = NULL;
    for (size_t i = 0; i < n; i++) {
        cursor c = cursor_of(entries, length, (Py_ssize_t)(i * (size_t)width));
        uint64_t offset, info, index, rtype;
        int64_t addend = 0;
        if (elf64) {
            offset = cursor_fixed(&c, 8);
            info = cursor_fixed(&c, 8);
            if (rela) addend = (int64_t)cursor_fixed(&c, 8);
            index = info >> 32;
            rtype = info & 0xFFFFFFFF;
        } else {
            offset = cursor_fixed(&c, 4);
            info = cursor_fixed(&c, 4);
            if (rela) addend = (int32_t)(uint32_t)cursor_fixed(&c, 4);
            index = info >> 8;
            rtype = info & 0xFF;
        }
        if (rtype < 1 || rtype > 4) {
            if (!decoded) continue; /* .debug_frame and .debug_line also hold code relocations */
            DECLINE(fail);
        }
        uint64_t size = rtype == 1 || rtype == 3 ? 4 : 8;
        if (!types[rtype]++) order[seen++] = (int)rtype;
        if (size > limit || offset > limit - size || index >= (uint64_t)count) DECLINE(fail);
        if (!rela) {
            cursor field = cursor_of(source, (Py_ssize_t)limit, (Py_ssize_t)offset);
            addend = size == 4 ? (int64_t)(int32_t)(uint32_t)cursor_fixed(&field, 4) : (int64_t)cursor_fixed(&field, 8);
        }
        uint64_t base = values[index];
        uint64_t value = (base + (uint64_t)addend) & (size == 4 ? 0xFFFFFFFFULL : ~0ULL);
        if (base || rela) {
            if (!data) {
                data = PyBytes_FromStringAndSize((const char *)source, (Py_ssize_t)limit);
                if (!data) goto fail;
                bytes = (uint8_t *)PyBytes_AS_STRING(data);
            }
            for (uint64_t k = 0; k < size; k++) bytes[offset + k] = (uint8_t)(value >> (8 * k));
        }
        named_index[index] = 1;
        symbol_slot *slot = &table[slot_of(index, addend)];
        if (!slot->symbol || slot->index != index || slot->addend != addend || slot->value != value) {
            if ((uint64_t)PyList_GET_SIZE(names) <= index) DECLINE(fail); /* changed by code a collection ran */
            PyObject *made_symbol = make_symbol(symbol_type, &fields, PyList_GET_ITEM(names, (Py_ssize_t)index),
                                                addend, value);
            if (!made_symbol) goto fail;
            Py_XSETREF(slot->symbol, made_symbol);
            slot->index = index;
            slot->addend = addend;
            slot->value = value;
        }
        PyObject *items[3] = {PyLong_FromUnsignedLongLong(offset), PyLong_FromUnsignedLongLong(size),
                              Py_NewRef(slot->symbol)};
        PyObject *reloc = record(kind, items, 3);
        if (!reloc) goto fail;
        found[made].offset = offset;
        found[made++].reloc = reloc;
        if (made > 1 && offset < last) in_order = 0;
        last = offset;
    }
    if (!in_order) {
        placed *scratch = PyMem_Malloc(made * sizeof(placed));
        if (!scratch) { PyErr_NoMemory(); goto fail; }
        sort_placed(found, scratch, made);
        PyMem_Free(scratch);
    }
    relocs = PyList_New((Py_ssize_t)made);
    by_type = PyDict_New();
    named = PySet_New(NULL);
    if (!relocs || !by_type || !named) goto fail;
    for (size_t i = 0; i < made; i++) PyList_SET_ITEM(relocs, (Py_ssize_t)i, found[i].reloc);
    made = 0; /* the list holds them now */
    for (int i = 0; i < seen; i++) {
        PyObject *key = PyLong_FromLong(order[i]), *number = PyLong_FromUnsignedLongLong(types[order[i]]);
        int put = key && number ? PyDict_SetItem(by_type, key, number) : -1;
        Py_XDECREF(key);
        Py_XDECREF(number);
        if (put < 0) goto fail;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!named_index[i]) continue;
        PyObject *index = PyLong_FromSsize_t(i);
        int put = index ? PySet_Add(named, index) : -1;
        Py_XDECREF(index);
        if (put < 0) goto fail;
    }
    out = PyTuple_Pack(4, data ? data : raw, relocs, by_type, named);
fail:
    for (size_t i = 0; i < made; i++) Py_DECREF(found[i].reloc);
    PyMem_Free(found);
    PyMem_Free(values);
    symbols_free(table);
    PyMem_Free(named_index);
    Py_XDECREF(data);
    Py_XDECREF(relocs);
    Py_XDECREF(by_type);
    Py_XDECREF(named);
    if (declined) Py_RETURN_NONE;
    return out;
}

/* What _scan_starts does to the starts dict, kept until the scan is through: a sequence's
 * function looked up (added when new), or a line's address kept in a function's lines. */
typedef struct {
    PyObject *symbol; /* a reference: replaying can run code that changes the symbols dict */
    int64_t line;     /* a lookup when keep is 0 */
    uint64_t address;
    int keep;
} start_event;

typedef struct {
    start_event *items;
    size_t len, cap;
} start_events;

static int events_add(start_events *e, PyObject *symbol, int keep, int64_t line, uint64_t address) {
    if (e->len == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        start_event *items = PyMem_Realloc(e->items, cap * sizeof(start_event));
        if (!items) { PyErr_NoMemory(); return -1; }
        e->items = items;
        e->cap = cap;
    }
    e->items[e->len++] = (start_event){Py_NewRef(symbol), line, address, keep};
    return 0;
}

static void events_free(start_events *e) {
    for (size_t i = 0; i < e->len; i++) Py_DECREF(e->items[i].symbol);
    PyMem_Free(e->items);
}

/* The events done to starts: each lookup as starts.setdefault(symbol, {}), each kept
 * address as _keep. */
static int events_replay(const start_events *e, PyObject *starts) {
    for (size_t i = 0; i < e->len; i++) {
        const start_event *ev = &e->items[i];
        PyObject *lines = PyDict_GetItemWithError(starts, ev->symbol);
        if (!lines) {
            if (PyErr_Occurred()) return -1;
            PyObject *fresh = PyDict_New();
            if (!fresh || PyDict_SetItem(starts, ev->symbol, fresh) < 0) { Py_XDECREF(fresh); return -1; }
            Py_DECREF(fresh);
            lines = fresh;
        }
        if (!ev->keep) continue;
        if (!PyDict_Check(lines)) { PyErr_SetString(PyExc_TypeError, "starts holds a value that is not a dict"); return -1; }
        Py_INCREF(lines); /* comparing addresses can run code that changes starts */
        PyObject *line = PyLong_FromLongLong(ev->line), *address = PyLong_FromUnsignedLongLong(ev->address);
        int failed = !line || !address;
        if (!failed) {
            PyObject *seen = PyDict_GetItemWithError(lines, line);
            Py_XINCREF(seen);
            int lower = seen ? PyObject_RichCompareBool(address, seen, Py_LT) : !PyErr_Occurred();
            if (lower < 0 || (!seen && PyErr_Occurred())) failed = 1;
            else if ((!seen || lower) && PyDict_SetItem(lines, line, address) < 0) failed = 1;
            Py_XDECREF(seen);
        }
        Py_XDECREF(line);
        Py_XDECREF(address);
        Py_DECREF(lines);
        if (failed) return -1;
    }
    return 0;
}

/* _scan_starts(data, pos, end, p, lengths, symbols, starts): the lowest address of each line
 * (that has an instruction of its own) of the opcodes data[pos:end] into starts, by function;
 * starts is left as it was when the scan declines. */
static PyObject *scan_starts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyBytes_CheckExact(args[0]) || !PyLong_CheckExact(args[1]) || !PyLong_CheckExact(args[2]) ||
        !PyList_CheckExact(args[4]) || !PyDict_CheckExact(args[5]) || !PyDict_CheckExact(args[6]))
        Py_RETURN_NONE;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]), end = PyLong_AsSsize_t(args[2]);
    if ((pos == -1 || end == -1) && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    if (pos < 0 || end > size) Py_RETURN_NONE;
    PyObject *program = args[3], *symbols = args[5], *starts = args[6];
    long long opcode_base, line_base, line_range, step;
    int got;
    if ((got = int_attr(program, "opcode_base", 0, 255, &opcode_base)) != 1 ||
        (got = int_attr(program, "line_base", -128, 127, &line_base)) != 1 ||
        (got = int_attr(program, "line_range", 0, 255, &line_range)) != 1 ||
        (got = int_attr(program, "minimum_instruction_length", 0, 255, &step)) != 1)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    Py_ssize_t nlengths = PyList_GET_SIZE(args[4]);
    if (nlengths > 255) Py_RETURN_NONE;
    uint8_t lengths[255];
    for (Py_ssize_t i = 0; i < nlengths; i++) {
        PyObject *item = PyList_GET_ITEM(args[4], i);
        if (!PyLong_CheckExact(item)) Py_RETURN_NONE;
        long v = PyLong_AsLong(item);
        if (v < 0 || v > 255) { PyErr_Clear(); Py_RETURN_NONE; }
        lengths[i] = (uint8_t)v;
    }

    start_events events = {NULL, 0, 0};
    int declined = 0;
    uint64_t address = 0, pending = 0;
    int64_t line = 1, pending_line = 0;
    PyObject *rows = NULL, *kept_in = NULL; /* a function (its symbol), or NULL: none */
    while (pos < end) {
        uint8_t op = data[pos++];
        cursor c = cursor_of(data, size, pos);
        int overflow = 0;
        if (op >= opcode_base) {
            if (line_range == 0) DECLINE(done);
            uint64_t adjusted = (uint64_t)(op - opcode_base);
            if (__builtin_add_overflow(address, (uint64_t)step * (adjusted / (uint64_t)line_range), &address) ||
                __builtin_add_overflow(line, line_base + (int64_t)(adjusted % (uint64_t)line_range), &line))
                DECLINE(done);
        } else if (op == 3) {
            int64_t n = cursor_sleb(&c, &overflow);
            if (c.bad || overflow || __builtin_add_overflow(line, n, &line)) DECLINE(done);
            pos = cursor_offset(&c);
            continue;
        } else if (op == 2) {
            uint64_t n = cursor_uleb(&c, &overflow), delta;
            if (c.bad || overflow || __builtin_mul_overflow((uint64_t)step, n, &delta) ||
                __builtin_add_overflow(address, delta, &address))
                DECLINE(done);
            pos = cursor_offset(&c);
            continue;
        } else if (op == 0) {
            uint64_t n = cursor_uleb(&c, &overflow);
            if (c.bad || overflow) DECLINE(done);
            pos = cursor_offset(&c);
            if (n == 0 || pos > end || n > (uint64_t)(end - pos)) DECLINE(done);
            uint8_t sub = data[pos];
            Py_ssize_t operands = pos + 1;
            pos += (Py_ssize_t)n;
            if (sub == 1) {
                if (kept_in && events_add(&events, kept_in, 1, pending_line, pending) < 0) goto fail;
                address = 0;
                line = 1;
                rows = kept_in = NULL;
            } else if (sub == 2) {
                for (Py_ssize_t k = operands + 8; k < pos; k++)
                    if (data[k]) DECLINE(done); /* an address past 64 bits */
                address = le_slice(data, size, operands, n - 1 > 8 ? 8 : (Py_ssize_t)n - 1);
                PyObject *key = PyLong_FromSsize_t(operands);
                if (!key) goto fail;
                PyObject *found = PyDict_GetItemWithError(symbols, key);
                Py_DECREF(key);
                if (!found && PyErr_Occurred()) goto fail;
                rows = found == Py_None ? NULL : found;
                if (rows && events_add(&events, rows, 0, 0, 0) < 0) goto fail;
            }
            continue;
        } else if (op == 8) {
            if (line_range == 0) DECLINE(done);
            if (__builtin_add_overflow(address, (uint64_t)step * (uint64_t)((255 - opcode_base) / line_range),
                                       &address))
                DECLINE(done);
            continue;
        } else if (op == 9) {
            if (__builtin_add_overflow(address, le_slice(data, size, pos, 2), &address)) DECLINE(done);
            pos += 2;
            continue;
        } else if (op == 4 || op == 5) {
            cursor_uleb(&c, NULL);
            if (c.bad) DECLINE(done);
            pos = cursor_offset(&c);
            continue;
        } else if (op != 1) {
            if (op != 6 && op != 7) {
                int count = op - 1 < nlengths ? lengths[op - 1] : 0;
                for (int i = 0; i < count; i++) cursor_uleb(&c, NULL);
                if (c.bad) DECLINE(done);
                pos = cursor_offset(&c);
            }
            continue;
        }
        if (kept_in && pending != address && events_add(&events, kept_in, 1, pending_line, pending) < 0) goto fail;
        kept_in = rows;
        pending = address;
        pending_line = line;
    }
    if (kept_in && events_add(&events, kept_in, 1, pending_line, pending) < 0) goto fail;
done:
    if (!declined && events_replay(&events, starts) < 0) goto fail;
    events_free(&events);
    if (declined) Py_RETURN_NONE;
    return Py_NewRef(starts);
fail:
    events_free(&events);
    return NULL;
}

/* A NUL-terminated ASCII name at data[pos:] as a str into *name, and where its NUL is; -1
 * when there is none such. */
static Py_ssize_t ascii_name(const uint8_t *data, Py_ssize_t size, Py_ssize_t pos, PyObject **name) {
    const uint8_t *nul = memchr(data + pos, 0, (size_t)(size - pos));
    if (!nul) return -1;
    Py_ssize_t end = nul - data;
    for (Py_ssize_t k = pos; k < end; k++)
        if (data[k] >= 0x80) return -1;
    *name = PyUnicode_DecodeASCII((const char *)data + pos, end - pos, NULL);
    return end;
}

/* n as 8 little-endian bytes at out. */
static void put_u64(uint8_t *out, uint64_t n) {
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(n >> (8 * i));
}

/* _sass_functions(data, where): (function, where each entry's name starts and ends, as two
 * little-endian u64) of each function of .nv_debug_info_reg_sass. */
static PyObject *sass_functions(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_CheckExact(args[0])) Py_RETURN_NONE;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]), pos = 0;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    while (pos < size) {
        PyObject *function = NULL;
        Py_ssize_t nul = ascii_name(data, size, pos, &function);
        if (nul < 0) goto decline;
        if (!function) goto fail;
        pos = nul + 1;
        cursor c = cursor_of(data, size, pos);
        uint64_t n = cursor_fixed(&c, 4);
        pos += 4;
        if (c.bad || n * 18 > (uint64_t)(size - pos)) { Py_DECREF(function); goto decline; }
        PyObject *spans = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * 16));
        if (!spans) { Py_DECREF(function); goto fail; }
        uint8_t *put = (uint8_t *)PyBytes_AS_STRING(spans);
        for (uint64_t i = 0; i < n; i++) {
            Py_ssize_t start = pos + 4;
            const uint8_t *found = start <= size ? memchr(data + start, 0, (size_t)(size - start)) : NULL;
            Py_ssize_t end = found ? found - data : -1;
            if (end < 0 || end > size - 13 || end == start) {
                Py_DECREF(function);
                Py_DECREF(spans);
                goto decline;
            }
            put_u64(put + 16 * i, (uint64_t)start);
            put_u64(put + 16 * i + 8, (uint64_t)end);
            pos = end + 13;
        }
        PyObject *item = PyTuple_Pack(2, function, spans);
        Py_DECREF(function);
        Py_DECREF(spans);
        if (!item || PyList_Append(out, item) < 0) { Py_XDECREF(item); goto fail; }
        Py_DECREF(item);
    }
    return out;
decline:
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(out);
    return NULL;
}

/* An unsigned integer of n (1-8) bytes at p, little- or big-endian. */
static uint64_t elf_uint(const uint8_t *p, int n, int little) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)p[little ? i : n - 1 - i] << (8 * i);
    return v;
}

/* The NUL-terminated string at offset of a string table, as Python's _c_string decodes it
 * (an offset past the table: the empty string). */
static PyObject *elf_string(const uint8_t *table, Py_ssize_t size, uint64_t offset) {
    if (offset >= (uint64_t)size) return PyUnicode_FromStringAndSize("", 0);
    const uint8_t *start = table + offset, *end = memchr(start, 0, (size_t)(size - (Py_ssize_t)offset));
    Py_ssize_t n = end ? end - start : size - (Py_ssize_t)offset;
    return PyUnicode_DecodeUTF8((const char *)start, n, "surrogateescape");
}

/* _section_list(kind, table, names, elf64, little, file, size, where): each section header of
 * table as a kind; None for a section that runs past the file (the reference raises). */
static PyObject *section_list(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyBytes_CheckExact(args[2]) ||
        !PyBool_Check(args[3]) || !PyBool_Check(args[4]) || !PyLong_CheckExact(args[6]))
        Py_RETURN_NONE;
    int elf64 = args[3] == Py_True, little = args[4] == Py_True, overflow = 0;
    long long file_size = PyLong_AsLongLongAndOverflow(args[6], &overflow);
    if (file_size == -1 && PyErr_Occurred()) return NULL;
    if (overflow || file_size < 0) Py_RETURN_NONE;
    const uint8_t *table = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    const uint8_t *names = (const uint8_t *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]), names_size = PyBytes_GET_SIZE(args[2]);
    Py_ssize_t width = elf64 ? 64 : 40, count = size / width;
    if (size % width) Py_RETURN_NONE;
    int word = elf64 ? 8 : 4;
    PyObject *out = PyList_New(count);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        const uint8_t *row = table + i * width;
        uint64_t name = elf_uint(row, 4, little), type = elf_uint(row + 4, 4, little);
        uint64_t offset = elf_uint(row + (elf64 ? 24 : 16), word, little);
        uint64_t length = elf_uint(row + (elf64 ? 32 : 20), word, little);
        uint64_t link = elf_uint(row + (elf64 ? 40 : 24), 4, little);
        uint64_t info = elf_uint(row + (elf64 ? 44 : 28), 4, little);
        uint64_t start = 0, stop = 0;
        if (type != 8 && i != 0) {
            if (length > (uint64_t)file_size || offset > (uint64_t)file_size - length) {
                Py_DECREF(out);
                Py_RETURN_NONE;
            }
            start = offset, stop = offset + length;
        }
        PyObject *items[9] = {
            elf_string(names, names_size, name), PyLong_FromUnsignedLongLong(type),
            PyLong_FromUnsignedLongLong(offset), PyLong_FromUnsignedLongLong(length),
            PyLong_FromUnsignedLongLong(link), PyLong_FromUnsignedLongLong(info),
            Py_NewRef(args[5]), PyLong_FromUnsignedLongLong(start), PyLong_FromUnsignedLongLong(stop),
        };
        PyObject *section = record((PyTypeObject *)args[0], items, 9);
        if (!section) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, section);
    }
    return out;
}

/* _symbol_list(kind, data, strtab, elf64, little, sections): each whole entry of a symbol
 * table as a kind (name, value, size, type, section index, binding). */
static PyObject *symbol_list(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyBytes_CheckExact(args[2]) ||
        !PyBool_Check(args[3]) || !PyBool_Check(args[4]) || !PyList_CheckExact(args[5]))
        Py_RETURN_NONE;
    int elf64 = args[3] == Py_True, little = args[4] == Py_True;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    const uint8_t *strtab = (const uint8_t *)PyBytes_AS_STRING(args[2]);
    Py_ssize_t strtab_size = PyBytes_GET_SIZE(args[2]);
    Py_ssize_t width = elf64 ? 24 : 16, count = PyBytes_GET_SIZE(args[1]) / width;
    PyObject *out = PyList_New(count);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        const uint8_t *row = data + i * width;
        uint64_t name = elf_uint(row, 4, little), value, size, shndx;
        int info;
        if (elf64) {
            info = row[4], shndx = elf_uint(row + 6, 2, little);
            value = elf_uint(row + 8, 8, little), size = elf_uint(row + 16, 8, little);
        } else {
            value = elf_uint(row + 4, 4, little), size = elf_uint(row + 8, 4, little);
            info = row[12], shndx = elf_uint(row + 14, 2, little);
        }
        PyObject *text = elf_string(strtab, strtab_size, name);
        /* the list may have changed while a name was decoded: its size is read each time */
        if (text && PyUnicode_GET_LENGTH(text) == 0 && (info & 0xF) == 3 && shndx > 0 &&
            shndx < (uint64_t)PyList_GET_SIZE(args[5])) {
            Py_SETREF(text, Py_NewRef(PyList_GET_ITEM(args[5], (Py_ssize_t)shndx)));
        }
        PyObject *items[6] = {
            text, PyLong_FromUnsignedLongLong(value), PyLong_FromUnsignedLongLong(size),
            PyLong_FromLong(info & 0xF), PyLong_FromUnsignedLongLong(shndx), PyLong_FromLong(info >> 4),
        };
        PyObject *symbol = record((PyTypeObject *)args[0], items, 6);
        if (!symbol) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, symbol);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"_section_list", (PyCFunction)(void (*)(void))section_list, METH_FASTCALL,
     "Each section header of an ELF section header table."},
    {"_symbol_list", (PyCFunction)(void (*)(void))symbol_list, METH_FASTCALL,
     "Each entry of an ELF symbol table."},
    {"_sass_functions", (PyCFunction)(void (*)(void))sass_functions, METH_FASTCALL,
     "The functions of .nv_debug_info_reg_sass and where their entries' names are."},
    {"_scan_starts", (PyCFunction)(void (*)(void))scan_starts, METH_FASTCALL,
     "The lowest address of each line of a line-number program's opcodes, by function."},
    {"_applied", (PyCFunction)(void (*)(void))applied, METH_FASTCALL,
     "A section's bytes with the relocations of a REL or RELA section applied."},
    {"_rows", (PyCFunction)(void (*)(void))rows, METH_FASTCALL, "The rows of a line-number program's opcodes."},
    {"_program_lines", (PyCFunction)(void (*)(void))program_lines, METH_FASTCALL,
     "The rows of a line-number program's opcodes as the text dump shows them."},
    {"_program_rows_json", (PyCFunction)(void (*)(void))program_rows_json, METH_FASTCALL,
     "The rows of a line-number program's opcodes as dump --json writes them."},
    {"_entries_json", (PyCFunction)(void (*)(void))entries_json, METH_FASTCALL,
     "Every entry of one function's register map as dump --json writes them."},
    {"_entries", (PyCFunction)(void (*)(void))entries, METH_FASTCALL,
     "Every entry of one function's register map."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cubin", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_cubin(void) {
    if (PyType_Ready(&row_lines_type) < 0) return NULL;
    return PyModule_Create(&module);
}
