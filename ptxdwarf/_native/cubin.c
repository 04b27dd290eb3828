/* The cubin's bulk records: the rows of a line-number program (ptxdwarf.dwarf.lines._rows)
 * and the entries of one function's register map (ptxdwarf.cuda.regmap._entries). Each
 * function returns None on anything it does not take, and its Python twin decides. */
#include "common.h"

static int atomic(PyObject *item) {
    return item == Py_None || PyLong_CheckExact(item) || PyBool_Check(item) || PyUnicode_CheckExact(item);
}

/* A new instance of the tuple subclass kind (a NamedTuple) holding the n items, which it
 * takes; NULL with an exception set. One that holds only ints, strings and None cannot be in a
 * cycle and is not tracked by the garbage collector: CPython untracks such exact tuples, not
 * those of a subclass, and every full collection would walk the hundreds of thousands of them. */
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

/* Whether kind is a tuple subclass whose instances record() can make. */
static int record_kind(PyObject *kind) {
    return PyType_Check(kind) && PyType_IsSubtype((PyTypeObject *)kind, &PyTuple_Type) &&
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
    PyObject *symbol; /* borrowed from the symbols dict, or Py_None */
} line_state;

static void line_reset(line_state *s, int default_is_stmt) {
    s->address = 0; s->file = 1; s->line = 1; s->column = 0; s->context = 0; s->name = 0;
    s->is_stmt = default_is_stmt; s->has_name = 0; s->symbol = Py_None;
}

static PyObject *line_row(PyTypeObject *kind, const line_state *s, int ends, int prologue_end,
                          int epilogue_begin) {
    PyObject *items[11] = {
        PyLong_FromUnsignedLongLong(s->address),
        PyLong_FromUnsignedLongLong(s->file),
        PyLong_FromLongLong(s->line),
        PyLong_FromUnsignedLongLong(s->column),
        PyBool_FromLong(s->is_stmt),
        PyBool_FromLong(ends),
        Py_NewRef(s->symbol),
        PyLong_FromUnsignedLongLong(s->context),
        s->has_name ? PyLong_FromUnsignedLongLong(s->name) : Py_NewRef(Py_None),
        PyBool_FromLong(prologue_end),
        PyBool_FromLong(epilogue_begin),
    };
    return record(kind, items, 11);
}

/* _rows(kind, data, pos, end, p, lengths, symbols): the rows of the opcodes data[pos:end]
 * of line program p as kind (LineRow) instances. */
static PyObject *rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyLong_CheckExact(args[2]) ||
        !PyLong_CheckExact(args[3]) || !PyList_CheckExact(args[5]) || !PyDict_CheckExact(args[6]))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0];
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    Py_ssize_t pos = PyLong_AsSsize_t(args[2]), end = PyLong_AsSsize_t(args[3]);
    if ((pos == -1 || end == -1) && PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    if (pos < 0 || end > size) Py_RETURN_NONE;
    PyObject *program = args[4], *symbols = args[6];

    long long opcode_base, line_base, line_range, step, default_is_stmt, base = 0;
    int got;
    if ((got = int_attr(program, "opcode_base", 0, 255, &opcode_base)) != 1 ||
        (got = int_attr(program, "line_base", -128, 127, &line_base)) != 1 ||
        (got = int_attr(program, "line_range", 0, 255, &line_range)) != 1 ||
        (got = int_attr(program, "minimum_instruction_length", 0, 255, &step)) != 1 ||
        (got = int_attr(program, "default_is_stmt", 0, 1, &default_is_stmt)) != 1)
        return got < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *str_offset = PyObject_GetAttrString(program, "str_offset");
    if (!str_offset) return NULL;
    int offset_known = str_offset == Py_None;
    Py_DECREF(str_offset);
    if (!offset_known) {
        if ((got = int_attr(program, "str_offset", 0, 0xFFFFFFFFLL, &base)) != 1)
            return got < 0 ? NULL : Py_NewRef(Py_None);
    }

    Py_ssize_t nlengths = PyList_GET_SIZE(args[5]);
    if (nlengths > 255) Py_RETURN_NONE;
    uint8_t lengths[255];
    for (Py_ssize_t i = 0; i < nlengths; i++) {
        PyObject *item = PyList_GET_ITEM(args[5], i);
        if (!PyLong_CheckExact(item)) Py_RETURN_NONE;
        long v = PyLong_AsLong(item);
        if (v < 0 || v > 255) { PyErr_Clear(); Py_RETURN_NONE; }
        lengths[i] = (uint8_t)v;
    }

    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    int declined = 0;
    line_state s;
    line_reset(&s, (int)default_is_stmt);
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
                s.symbol = found ? found : Py_None;
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
            PyObject *row = line_row(kind, &s, ends, prologue_end, epilogue_begin);
            if (!row) goto fail;
            int appended = PyList_Append(out, row);
            Py_DECREF(row);
            if (appended < 0) goto fail;
            prologue_end = epilogue_begin = 0;
            if (ends) line_reset(&s, (int)default_is_stmt);
        }
    }
done:
    if (declined) { Py_DECREF(out); Py_RETURN_NONE; }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* _entries(kind, data, spans, types, where): every entry of one function's register map as kind
 * (RegisterMapEntry) instances, a tuple. */
static PyObject *entries(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !record_kind(args[0]) || !PyBytes_CheckExact(args[1]) || !PyList_CheckExact(args[2]) ||
        (args[3] != Py_None && !PyBytes_CheckExact(args[3])))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0];
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    PyObject *spans = args[2], *types = args[3];
    Py_ssize_t n = PyList_GET_SIZE(spans);
    if (types != Py_None && PyBytes_GET_SIZE(types) < n) Py_RETURN_NONE;
    const uint8_t *codes = types != Py_None ? (const uint8_t *)PyBytes_AS_STRING(types) : NULL;
    PyObject *out = PyTuple_New(n);
    PyObject *names = PyDict_New();
    if (!out || !names) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *span = PyList_GET_ITEM(spans, i);
        if (!PyTuple_CheckExact(span) || PyTuple_GET_SIZE(span) != 2) goto decline;
        Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 0));
        Py_ssize_t stop = PyLong_AsSsize_t(PyTuple_GET_ITEM(span, 1));
        if (PyErr_Occurred()) { PyErr_Clear(); goto decline; }
        if (start < 4 || stop < start || stop > size - 13) goto decline;
        for (Py_ssize_t k = start; k < stop; k++)
            if (data[k] >= 0x80) goto decline;
        PyObject *name = PyUnicode_DecodeASCII((const char *)data + start, stop - start, NULL);
        if (!name) goto fail;
        PyObject *shared = PyDict_SetDefault(names, name, name);
        Py_XINCREF(shared);
        Py_DECREF(name);
        if (!shared) goto fail;
        cursor c = cursor_of(data, size, stop + 1);
        uint32_t reg = (uint32_t)cursor_fixed(&c, 4);
        uint32_t low = (uint32_t)cursor_fixed(&c, 4);
        uint32_t high = (uint32_t)cursor_fixed(&c, 4);
        cursor p = cursor_of(data, size, start - 4);
        uint32_t piece = (uint32_t)cursor_fixed(&p, 4);
        PyObject *items[7] = {
            shared,
            PyLong_FromUnsignedLong(reg >> 24),
            PyLong_FromUnsignedLong(reg & 0xFFFFFF),
            PyLong_FromUnsignedLong(low),
            PyLong_FromUnsignedLong(high),
            PyLong_FromUnsignedLong(piece),
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

static PyMethodDef methods[] = {
    {"_rows", (PyCFunction)(void (*)(void))rows, METH_FASTCALL, "The rows of a line-number program's opcodes."},
    {"_entries", (PyCFunction)(void (*)(void))entries, METH_FASTCALL,
     "Every entry of one function's register map."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cubin", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_cubin(void) { return PyModule_Create(&module); }
