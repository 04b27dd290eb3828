/* The cubin's bulk records: its relocations applied (ptxdwarf.cuda.cubin._applied), the rows
 * of a line-number program (ptxdwarf.dwarf.lines._rows), the lowest address of each of its lines
 * (ptxdwarf.dwarf.lines._scan_starts) and the entries of one function's
 * register map and where they are (ptxdwarf.cuda.regmap._entries, _sass_functions). Each function returns None on anything it
 * does not take, and its Python twin decides. */
#include "common.h"

/* Whether item cannot take part in a reference cycle, now or later: an int, a string, None,
 * or a record or Symbol this module made and untracked (see record and untrack_symbol). */
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
    PyObject *symbol; /* a reference: collecting the records made can run code that changes symbols */
} line_state;

static void line_reset(line_state *s, int default_is_stmt) {
    s->address = 0; s->file = 1; s->line = 1; s->column = 0; s->context = 0; s->name = 0;
    s->is_stmt = default_is_stmt; s->has_name = 0; Py_XSETREF(s->symbol, Py_NewRef(Py_None));
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
    line_state s = {.symbol = NULL};
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
    Py_XDECREF(s.symbol);
    if (declined) { Py_DECREF(out); Py_RETURN_NONE; }
    return out;
fail:
    Py_XDECREF(s.symbol);
    Py_DECREF(out);
    return NULL;
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
        cursor at = cursor_of(spans, n * 16, i * 16);
        uint64_t first = cursor_fixed(&at, 8), last = cursor_fixed(&at, 8);
        if (first < 4 || last < first || size < 13 || last > (uint64_t)(size - 13)) goto decline;
        Py_ssize_t start = (Py_ssize_t)first, stop = (Py_ssize_t)last;
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

/* The Symbol of each (symbol index, addend) a section's relocations name: an open-addressing
 * table. */
typedef struct {
    uint64_t index, value;
    int64_t addend;
    PyObject *symbol; /* NULL: a free slot */
} symbol_slot;

typedef struct {
    symbol_slot *slots;
    size_t cap, used;
} symbol_table;

static size_t slot_of(const symbol_table *t, uint64_t index, int64_t addend) {
    uint64_t h = index * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)addend + 0x632BE59BD9B4E019ULL);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    size_t i = (size_t)h & (t->cap - 1);
    while (t->slots[i].symbol && (t->slots[i].index != index || t->slots[i].addend != addend))
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int symbols_grow(symbol_table *t) {
    if (t->cap && (t->used + 1) * 2 <= t->cap) return 0;
    symbol_table bigger = {NULL, t->cap ? t->cap * 2 : 64, t->used};
    bigger.slots = PyMem_Calloc(bigger.cap, sizeof(symbol_slot));
    if (!bigger.slots) { PyErr_NoMemory(); return -1; }
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].symbol) bigger.slots[slot_of(&bigger, t->slots[i].index, t->slots[i].addend)] = t->slots[i];
    PyMem_Free(t->slots);
    *t = bigger;
    return 0;
}

static void symbols_free(symbol_table *t) {
    for (size_t i = 0; i < t->cap; i++) Py_XDECREF(t->slots[i].symbol);
    PyMem_Free(t->slots);
}

/* A Symbol holds a name, an addend and a value (a string and ints) and is not changed: like
 * the records, it cannot be in a cycle and is not tracked (nor, then, the Reloc holding it). */
static void untrack_symbol(PyObject *symbol) {
    if (Py_TYPE(symbol)->tp_dictoffset == 0 && PyObject_GC_IsTracked(symbol)) PyObject_GC_UnTrack(symbol);
}

typedef struct {
    uint64_t offset;
    PyObject *reloc;
} placed;

/* Sorts n items by offset, keeping the order of equal ones; scratch holds n. */
static void sort_placed(placed *items, placed *scratch, size_t n) {
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
    if (nargs != 11 || !record_kind(args[0]) || !PyType_Check(args[1]) || !PyBytes_CheckExact(args[2]) ||
        !PyBytes_CheckExact(args[3]) || !PyBool_Check(args[4]) || !PyBool_Check(args[5]) ||
        args[6] != Py_True || !PyList_CheckExact(args[7]) || !PyList_CheckExact(args[8]) ||
        !PyBool_Check(args[9]))
        Py_RETURN_NONE;
    PyTypeObject *kind = (PyTypeObject *)args[0];
    PyObject *symbol_type = args[1], *raw = args[2], *names = args[8];
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
    symbol_table table = {NULL, 0, 0};
    int declined = 0;
    if (!values || !found) { PyErr_NoMemory(); goto fail; }
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
        if (symbols_grow(&table) < 0) goto fail;
        symbol_slot *slot = &table.slots[slot_of(&table, index, addend)];
        if (!slot->symbol || slot->value != value) {
            if ((uint64_t)PyList_GET_SIZE(names) <= index) DECLINE(fail); /* changed by a Symbol made */
            PyObject *call[3] = {PyList_GET_ITEM(names, (Py_ssize_t)index), PyLong_FromLongLong(addend),
                                 PyLong_FromUnsignedLongLong(value)};
            PyObject *made_symbol = call[1] && call[2] ? PyObject_Vectorcall(symbol_type, call, 3, NULL) : NULL;
            Py_XDECREF(call[1]);
            Py_XDECREF(call[2]);
            if (!made_symbol) goto fail;
            untrack_symbol(made_symbol);
            if (!slot->symbol) table.used++;
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
    for (size_t i = 0; i < table.cap; i++) {
        if (!table.slots[i].symbol) continue;
        PyObject *index = PyLong_FromUnsignedLongLong(table.slots[i].index);
        int put = index ? PySet_Add(named, index) : -1;
        Py_XDECREF(index);
        if (put < 0) goto fail;
    }
    out = PyTuple_Pack(4, data ? data : raw, relocs, by_type, named);
fail:
    for (size_t i = 0; i < made; i++) Py_DECREF(found[i].reloc);
    PyMem_Free(found);
    PyMem_Free(values);
    symbols_free(&table);
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

static PyMethodDef methods[] = {
    {"_sass_functions", (PyCFunction)(void (*)(void))sass_functions, METH_FASTCALL,
     "The functions of .nv_debug_info_reg_sass and where their entries' names are."},
    {"_scan_starts", (PyCFunction)(void (*)(void))scan_starts, METH_FASTCALL,
     "The lowest address of each line of a line-number program's opcodes, by function."},
    {"_applied", (PyCFunction)(void (*)(void))applied, METH_FASTCALL,
     "A section's bytes with the relocations of a REL or RELA section applied."},
    {"_rows", (PyCFunction)(void (*)(void))rows, METH_FASTCALL, "The rows of a line-number program's opcodes."},
    {"_entries", (PyCFunction)(void (*)(void))entries, METH_FASTCALL,
     "Every entry of one function's register map."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cubin", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_cubin(void) { return PyModule_Create(&module); }
