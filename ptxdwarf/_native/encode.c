/* The DIE encoder's hot loop: a unit's tree of built DIEs written to .debug_info bytes, with
 * the fields, breaks, fixups and relocations the encoder records. The twin of
 * ptxdwarf.dwarf.encode.write_dies. The decisions stay with the encoder: it gives each shape's
 * abbreviation code and forms (native_shape) and each strp string's symbol (pool.symbol); this
 * lays out the bytes. Anything else (a DIE that is not built, a kept abbreviation table, a value
 * of a type or range it does not take) gives None before the encoder is touched, and the
 * reference writes the unit, raising the error with its place. */
#include "common.h"
#include <structmember.h>

enum { F_ADDR = 0x01, F_BLOCK2 = 0x03, F_BLOCK4 = 0x04, F_DATA2 = 0x05, F_DATA4 = 0x06,
       F_DATA8 = 0x07, F_STRING = 0x08, F_BLOCK = 0x09, F_BLOCK1 = 0x0a, F_DATA1 = 0x0b,
       F_FLAG = 0x0c, F_SDATA = 0x0d, F_STRP = 0x0e, F_UDATA = 0x0f, F_REF_ADDR = 0x10,
       F_REF1 = 0x11, F_REF2 = 0x12, F_REF4 = 0x13, F_REF8 = 0x14, F_SEC_OFFSET = 0x17,
       F_EXPRLOC = 0x18, F_FLAG_PRESENT = 0x19, F_REF_SIG8 = 0x20 };

/* The model's classes (bind() hands them over once); where DIE slots live. */
static struct {
    PyTypeObject *built, *die, *symbol, *reloc, *location_list, *block;
    Py_ssize_t tag, children, has_children, abbrev_code, specs, values;
    int bound;
} M;

static PyObject *s_out, *s_offsets, *s_breaks, *s_fields, *s_fixups, *s_relocs, *s_unit_start, *s_pool,
    *s_symbol, *s_expressions, *s_by_id, *s_get, *s_loc_offsets, *s_options, *s_strings, *s_native_shape,
    *s_shape_code, *s_offset, *s_value, *s_relocs_attr, *s_debug_loc;

static inline PyObject *slot(PyObject *obj, Py_ssize_t offset) { return *(PyObject **)((char *)obj + offset); }

static PyObject *bind(PyObject *self, PyObject *args) {
    PyObject *types[6];
    if (!PyArg_ParseTuple(args, "OOOOOO", &types[0], &types[1], &types[2], &types[3], &types[4], &types[5]))
        return NULL;
    for (int i = 0; i < 6; i++)
        if (!PyType_Check(types[i])) return PyErr_Format(PyExc_TypeError, "bind: argument %d is not a class", i + 1);
    PyTypeObject *built = (PyTypeObject *)types[0], *die = (PyTypeObject *)types[1];
    if (slot_offset(die, "tag", &M.tag) < 0 || slot_offset(die, "children", &M.children) < 0 ||
        slot_offset(die, "has_children", &M.has_children) < 0 ||
        slot_offset(die, "abbrev_code", &M.abbrev_code) < 0 || slot_offset(built, "specs", &M.specs) < 0 ||
        slot_offset(built, "values", &M.values) < 0)
        return NULL;
    for (int i = 0; i < 6; i++) Py_INCREF(types[i]);
    M.built = built;
    M.die = die;
    M.symbol = (PyTypeObject *)types[2];
    M.reloc = (PyTypeObject *)types[3];
    M.location_list = (PyTypeObject *)types[4];
    M.block = (PyTypeObject *)types[5];
    M.bound = 1;
    Py_RETURN_NONE;
}

/* One attribute of a shape: its form, fixed size (0: not fixed), constant attribute (named in
 * fixups). */
typedef struct {
    int form, size;
    PyObject *attr;
} entry;

typedef struct {
    PyObject *specs; /* the key, with tag and children; held so that its address stays its own */
    long tag;
    int has_children;
    PyObject *code;   /* bytes, once a DIE of the shape is written */
    PyObject *result; /* what native_shape gave: the encoder's shape and the entries */
    entry *entries;
    Py_ssize_t n;
} shape;

typedef struct {
    shape *slots;
    size_t cap, used;
} shape_table;

static void shapes_free(shape_table *t) {
    for (size_t i = 0; i < t->cap; i++) {
        shape *s = &t->slots[i];
        if (!s->specs) continue;
        Py_DECREF(s->specs);
        Py_XDECREF(s->code);
        Py_XDECREF(s->result);
        PyMem_Free(s->entries);
    }
    PyMem_Free(t->slots);
}

static size_t shape_hash(PyObject *specs, long tag, int has_children) {
    size_t h = (size_t)(uintptr_t)specs >> 4;
    h ^= (size_t)tag * 0x9E3779B97F4A7C15ULL + (size_t)has_children;
    return h * 0xff51afd7ed558ccdULL;
}

static shape *shapes_find(shape_table *t, PyObject *specs, long tag, int has_children, int *found) {
    size_t mask = t->cap - 1;
    for (size_t i = shape_hash(specs, tag, has_children) & mask;; i = (i + 1) & mask) {
        shape *s = &t->slots[i];
        if (!s->specs) { *found = 0; return s; }
        if (s->specs == specs && s->tag == tag && s->has_children == has_children) { *found = 1; return s; }
    }
}

static int shapes_grow(shape_table *t) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    shape *slots = PyMem_Calloc(cap, sizeof(shape));
    if (!slots) { PyErr_NoMemory(); return -1; }
    shape_table grown = {slots, cap, t->used};
    for (size_t i = 0; i < t->cap; i++) {
        shape *s = &t->slots[i];
        if (!s->specs) continue;
        int found;
        *shapes_find(&grown, s->specs, s->tag, s->has_children, &found) = *s;
    }
    PyMem_Free(t->slots);
    *t = grown;
    return 0;
}

/* Fill ``s`` from native_shape's (shape, entries); 0 if it is not of that form. */
static int shape_from(shape *s, PyObject *result) {
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != 2) return 0;
    PyObject *entries = PyTuple_GET_ITEM(result, 1);
    if (!PyTuple_Check(entries)) return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(entries);
    s->entries = PyMem_Calloc(n ? (size_t)n : 1, sizeof(entry));
    if (!s->entries) { PyErr_NoMemory(); return -1; }
    s->n = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyTuple_GET_ITEM(entries, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 3) return 0;
        PyObject *form = PyTuple_GET_ITEM(e, 0), *size = PyTuple_GET_ITEM(e, 1);
        if (!PyLong_CheckExact(form) || !PyLong_CheckExact(size)) return 0;
        long f = PyLong_AsLong(form), z = PyLong_AsLong(size);
        if (f < 0 || f > 0xffff || (z != 0 && z != 1 && z != 2 && z != 4 && z != 8)) {
            PyErr_Clear();
            return 0;
        }
        s->entries[i] = (entry){(int)f, (int)z, PyTuple_GET_ITEM(e, 2)};
    }
    return 1;
}

/* What one call collects before it touches the encoder. */
typedef struct {
    buffer out;
    Py_ssize_t base; /* len(enc.out) on entry */
    Py_ssize_t unit_start;
    PyObject *offsets, *mine; /* enc.offsets; this unit's offsets, merged at the end */
    PyObject *by_id, *expressions, *loc_offsets;
    int strp_numbers; /* options.strings == "strp": location lists are numbers */
    Py_ssize_t *breaks;
    size_t nbreaks, capbreaks;
    Py_ssize_t (*fields)[2];
    size_t nfields, capfields;
    PyObject *fixups, *relocs, *strps; /* strps: (index in relocs, position, raw) */
    shape_table shapes;
} writer;

#define DECLINE 0
#define FAIL (-1)
#define OK 1

static int grow(void **items, size_t *cap, size_t n, size_t size) {
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    void *p = PyMem_Realloc(*items, c * size);
    if (!p) { PyErr_NoMemory(); return -1; }
    *items = p;
    *cap = c;
    return 0;
}

static inline Py_ssize_t here(const writer *w) { return w->base + (Py_ssize_t)w->out.len; }

static int add_field(writer *w, Py_ssize_t at, int size) {
    if (size <= 1) return 0;
    if (grow((void **)&w->fields, &w->capfields, w->nfields, sizeof *w->fields) < 0) return -1;
    w->fields[w->nfields][0] = at;
    w->fields[w->nfields][1] = size;
    w->nfields++;
    return 0;
}

static int put_fixed(writer *w, uint64_t v, int size) {
    uint8_t b[8];
    for (int i = 0; i < size; i++) b[i] = (uint8_t)(v >> (8 * i));
    return buffer_put(&w->out, b, (size_t)size);
}

static int put_uleb(writer *w, uint64_t v) {
    uint8_t b[10];
    int n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        b[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return buffer_put(&w->out, b, (size_t)n);
}

static int put_sleb(writer *w, int64_t v) {
    uint8_t b[10];
    int n = 0;
    for (;;) {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7; /* arithmetic: implementation-defined in C11, arithmetic on every target CPython runs */
        if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) { b[n++] = byte; break; }
        b[n++] = byte | 0x80;
    }
    return buffer_put(&w->out, b, (size_t)n);
}

/* A Reloc(at, size, symbol), made as tuple.__new__(Reloc, ...) makes it. */
static PyObject *new_reloc(Py_ssize_t at, int size, PyObject *symbol) {
    PyObject *r = M.reloc->tp_alloc(M.reloc, 3);
    if (!r) return NULL;
    PyObject *a = PyLong_FromSsize_t(at), *z = PyLong_FromLong(size);
    if (!a || !z) { Py_XDECREF(a); Py_XDECREF(z); Py_DECREF(r); return NULL; }
    Py_INCREF(symbol);
    PyTuple_SET_ITEM(r, 0, a);
    PyTuple_SET_ITEM(r, 1, z);
    PyTuple_SET_ITEM(r, 2, symbol);
    return r;
}

static int add_reloc(writer *w, Py_ssize_t at, int size, PyObject *symbol) {
    PyObject *r = new_reloc(at, size, symbol);
    if (!r) return FAIL;
    int rc = PyList_Append(w->relocs, r);
    Py_DECREF(r);
    return rc < 0 ? FAIL : OK;
}

/* A symbol as a relocation holds it (name and addend): ``s`` itself when its value is None. */
static int plain_symbol(PyObject *s, PyObject **out) {
    PyObject *value = PyObject_GetAttr(s, s_value);
    if (!value) return FAIL;
    int plain = value == Py_None;
    Py_DECREF(value);
    if (!plain) return DECLINE;
    *out = s;
    return OK;
}

/* A value that fits ``size`` bytes unsigned, as ``struct.pack`` takes it: a non-negative int or a bool. */
static int unsigned_of(PyObject *v, int size, uint64_t *out) {
    if (v == Py_True || v == Py_False) { *out = v == Py_True; return OK; }
    if (!PyLong_CheckExact(v)) return DECLINE;
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    if (x == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return DECLINE; }
    if (size < 8 && x >> (8 * size)) return DECLINE;
    *out = x;
    return OK;
}

/* A number, a symbol or a location list reference of ``size`` bytes. */
static int write_number(writer *w, PyObject *v, int size) {
    Py_ssize_t at = here(w);
    if (add_field(w, at, size) < 0) return FAIL;
    uint64_t x;
    int rc = unsigned_of(v, size, &x);
    if (rc != DECLINE) return rc == OK && put_fixed(w, x, size) < 0 ? FAIL : rc;
    if (Py_IS_TYPE(v, M.symbol)) {
        PyObject *s;
        if ((rc = plain_symbol(v, &s)) != OK) return rc;
        if (add_reloc(w, at, size, s) < 0) return FAIL;
        return put_fixed(w, 0, size) < 0 ? FAIL : OK;
    }
    if (Py_IS_TYPE(v, M.location_list)) {
        PyObject *key = PyLong_FromVoidPtr(v);
        if (!key) return FAIL;
        PyObject *offset = PyDict_GetItemWithError(w->loc_offsets, key);
        Py_DECREF(key);
        if (!offset) {
            if (PyErr_Occurred()) return FAIL;
            offset = PyObject_GetAttr(v, s_offset);
            if (!offset) return FAIL;
        } else {
            Py_INCREF(offset);
        }
        if (w->strp_numbers) {
            rc = PyLong_CheckExact(offset) ? unsigned_of(offset, size, &x) : DECLINE;
            Py_DECREF(offset);
            return rc == OK && put_fixed(w, x, size) < 0 ? FAIL : rc;
        }
        PyObject *symbol = PyObject_CallFunctionObjArgs((PyObject *)M.symbol, s_debug_loc, offset, NULL);
        Py_DECREF(offset);
        if (!symbol) return FAIL;
        rc = add_reloc(w, at, size, symbol);
        Py_DECREF(symbol);
        return rc == OK && put_fixed(w, 0, size) < 0 ? FAIL : rc;
    }
    return DECLINE;
}

/* The offset of a DIE written already (this unit's first), or -1. */
static int offset_of(writer *w, PyObject *die, Py_ssize_t *out) {
    PyObject *key = PyLong_FromVoidPtr(die);
    if (!key) return FAIL;
    PyObject *o = PyDict_GetItemWithError(w->mine, key);
    if (!o && !PyErr_Occurred()) o = PyDict_GetItemWithError(w->offsets, key);
    Py_DECREF(key);
    if (!o) {
        if (PyErr_Occurred()) return FAIL;
        *out = -1;
        return OK;
    }
    if (!PyLong_CheckExact(o)) return DECLINE;
    *out = PyLong_AsSsize_t(o);
    if (*out == -1 && PyErr_Occurred()) { PyErr_Clear(); return DECLINE; }
    return OK;
}

static int write_reference(writer *w, PyObject *v, const entry *e) {
    if (!PyObject_TypeCheck(v, M.die)) return PyLong_CheckExact(v) ? write_number(w, v, e->size) : DECLINE;
    Py_ssize_t base = e->form == F_REF_ADDR ? 0 : w->unit_start, at = here(w), o;
    if (add_field(w, at, e->size) < 0) return FAIL;
    int rc = offset_of(w, v, &o);
    if (rc != OK) return rc;
    if (o >= 0 && o - base >= 0 && (e->size == 8 || (uint64_t)(o - base) >> (8 * e->size) == 0))
        return put_fixed(w, (uint64_t)(o - base), e->size) < 0 ? FAIL : OK;
    PyObject *fixup = Py_BuildValue("(niOnO)", at, e->size, v, base, e->attr);
    if (!fixup) return FAIL;
    rc = PyList_Append(w->fixups, fixup);
    Py_DECREF(fixup);
    return rc < 0 || put_fixed(w, 0, e->size) < 0 ? FAIL : OK;
}

/* A str as UTF-8 without NUL; DECLINE for others (surrogate escapes included). */
static int utf8_of(PyObject *v, const char **data, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(v)) return DECLINE;
    *data = PyUnicode_AsUTF8AndSize(v, n);
    if (!*data) { PyErr_Clear(); return DECLINE; }
    return memchr(*data, 0, (size_t)*n) ? DECLINE : OK;
}

static int write_strp(writer *w, PyObject *v) {
    const char *data;
    Py_ssize_t n, at = here(w);
    int rc = utf8_of(v, &data, &n);
    if (rc != OK) return rc;
    PyObject *raw = PyBytes_FromStringAndSize(data, n);
    if (!raw) return FAIL;
    PyObject *item = Py_BuildValue("(nnN)", PyList_GET_SIZE(w->relocs), at, raw);
    if (!item) return FAIL;
    rc = PyList_Append(w->strps, item);
    Py_DECREF(item);
    if (rc < 0 || PyList_Append(w->relocs, Py_None) < 0) return FAIL;
    if (add_field(w, at, 4) < 0) return FAIL;
    return put_fixed(w, 0, 4) < 0 ? FAIL : OK;
}

/* The Block of an expression or block value (new reference in *out), as ExpressionCache.get gives it. */
static int block_of(writer *w, PyObject *v, PyObject **out) {
    if (PyBytes_Check(v) && (PyBytes_CheckExact(v) || Py_IS_TYPE(v, M.block))) {
        Py_INCREF(v);
        *out = v;
        return OK;
    }
    if (PyTuple_CheckExact(v)) {
        PyObject *key = PyLong_FromVoidPtr(v);
        if (!key) return FAIL;
        PyObject *found = PyDict_GetItemWithError(w->by_id, key);
        Py_DECREF(key);
        if (found && PyTuple_Check(found) && PyTuple_GET_SIZE(found) == 2 && PyTuple_GET_ITEM(found, 0) == v) {
            *out = PyTuple_GET_ITEM(found, 1);
            Py_INCREF(*out);
            return OK;
        }
        if (PyErr_Occurred()) return FAIL;
    } else if (!PyList_CheckExact(v)) {
        return DECLINE;
    }
    *out = PyObject_CallMethodOneArg(w->expressions, s_get, v);
    if (!*out) { PyErr_Clear(); return DECLINE; } /* the reference raises it, with its place */
    if (!Py_IS_TYPE(*out, M.block)) { Py_CLEAR(*out); return DECLINE; }
    return OK;
}

static int write_block(writer *w, PyObject *v, int form) {
    PyObject *b;
    int rc = block_of(w, v, &b);
    if (rc != OK) return rc;
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    rc = OK;
    if (form == F_BLOCK1 ? n > 0xff : form == F_BLOCK2 ? n > 0xffff : form == F_BLOCK4 ? (uint64_t)n > 0xffffffffu : 0)
        rc = DECLINE;
    else if (form == F_BLOCK1 || form == F_BLOCK2 || form == F_BLOCK4)
        rc = put_fixed(w, (uint64_t)n, form == F_BLOCK1 ? 1 : form == F_BLOCK2 ? 2 : 4) < 0 ? FAIL : OK;
    else
        rc = put_uleb(w, (uint64_t)n) < 0 ? FAIL : OK;
    Py_ssize_t first = here(w);
    if (rc == OK && buffer_put(&w->out, PyBytes_AS_STRING(b), (size_t)n) < 0) rc = FAIL;
    if (rc == OK && Py_IS_TYPE(b, M.block)) {
        PyObject *relocs = PyObject_GetAttr(b, s_relocs_attr);
        if (!relocs) rc = FAIL;
        else if (!PyTuple_Check(relocs)) rc = DECLINE;
        for (Py_ssize_t i = 0; rc == OK && i < PyTuple_GET_SIZE(relocs); i++) {
            PyObject *r = PyTuple_GET_ITEM(relocs, i), *s;
            if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3 || !PyLong_CheckExact(PyTuple_GET_ITEM(r, 0)) ||
                !PyLong_CheckExact(PyTuple_GET_ITEM(r, 1)) || !Py_IS_TYPE(PyTuple_GET_ITEM(r, 2), M.symbol)) {
                rc = DECLINE;
                break;
            }
            Py_ssize_t off = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 0));
            long size = PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
            if (PyErr_Occurred()) { PyErr_Clear(); rc = DECLINE; break; }
            if ((rc = plain_symbol(PyTuple_GET_ITEM(r, 2), &s)) != OK) break;
            if (off < 0 || off > n || size < 0 || size > 8) { rc = DECLINE; break; }
            rc = add_reloc(w, first + off, (int)size, s);
        }
        Py_XDECREF(relocs);
    }
    Py_DECREF(b);
    return rc;
}

static int write_value(writer *w, PyObject *v, const entry *e) {
    switch (e->form) {
    case F_STRING: {
        const char *data;
        Py_ssize_t n;
        int rc = utf8_of(v, &data, &n);
        if (rc != OK) return rc;
        return buffer_put(&w->out, data, (size_t)n) < 0 || buffer_byte(&w->out, 0) < 0 ? FAIL : OK;
    }
    case F_STRP:
        return e->size == 4 ? write_strp(w, v) : DECLINE;
    case F_REF_ADDR: case F_REF1: case F_REF2: case F_REF4: case F_REF8:
        return e->size ? write_reference(w, v, e) : DECLINE;
    case F_ADDR: case F_DATA1: case F_DATA2: case F_DATA4: case F_DATA8: case F_FLAG: case F_SEC_OFFSET:
    case F_REF_SIG8:
        return e->size ? write_number(w, v, e->size) : DECLINE;
    case F_UDATA: {
        uint64_t x;
        if (!PyLong_CheckExact(v)) return DECLINE;
        int rc = unsigned_of(v, 8, &x);
        return rc == OK && put_uleb(w, x) < 0 ? FAIL : rc;
    }
    case F_SDATA: {
        if (!PyLong_CheckExact(v)) return DECLINE;
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return DECLINE; }
        return put_sleb(w, x) < 0 ? FAIL : OK;
    }
    case F_FLAG_PRESENT:
        return v == Py_True ? OK : DECLINE;
    case F_BLOCK1: case F_BLOCK2: case F_BLOCK4: case F_BLOCK: case F_EXPRLOC:
        return write_block(w, v, e->form);
    default:
        return DECLINE;
    }
}

static shape *shape_for(writer *w, PyObject *native_shape, PyObject *specs, long tag, int has_children) {
    int found;
    if (w->shapes.used * 2 >= w->shapes.cap && shapes_grow(&w->shapes) < 0) return NULL;
    shape *s = shapes_find(&w->shapes, specs, tag, has_children, &found);
    if (found) return s;
    PyObject *result = PyObject_CallFunction(native_shape, "lOO", tag, has_children ? Py_True : Py_False, specs);
    if (!result) return NULL;
    Py_INCREF(specs);
    s->specs = specs;
    s->tag = tag;
    s->has_children = has_children;
    s->result = result;
    w->shapes.used++;
    int rc = shape_from(s, result);
    if (rc < 0) return NULL;
    if (rc == 0) s->n = -1; /* not a shape this writer knows: its DIEs decline */
    return s;
}

static int write_values(writer *w, PyObject *die, PyObject *values, PyObject *enc, PyObject *native_shape,
                        PyObject *specs, long t, int has_children);

/* One built DIE, children not included. */
static int write_die(writer *w, PyObject *die, PyObject *enc, PyObject *native_shape) {
    if (!Py_IS_TYPE(die, M.built)) return DECLINE;
    PyObject *specs = slot(die, M.specs), *values = slot(die, M.values), *tag = slot(die, M.tag),
             *children = slot(die, M.children), *hc = slot(die, M.has_children);
    if (!specs || !values || !tag || !children || !hc || slot(die, M.abbrev_code) != Py_None) return DECLINE;
    if (specs == Py_None || !PyTuple_CheckExact(values) || !PyLong_CheckExact(tag) || !PyList_CheckExact(children) ||
        !PyBool_Check(hc))
        return DECLINE;
    long t = PyLong_AsLong(tag);
    if (t == -1 && PyErr_Occurred()) { PyErr_Clear(); return DECLINE; }
    int has_children = PyList_GET_SIZE(children) > 0 || hc == Py_True;
    Py_INCREF(values); /* the encoder's code runs below, and may change the DIE */
    Py_INCREF(specs);
    int rc = write_values(w, die, values, enc, native_shape, specs, t, has_children);
    Py_DECREF(specs);
    Py_DECREF(values);
    return rc;
}

static int write_values(writer *w, PyObject *die, PyObject *values, PyObject *enc, PyObject *native_shape,
                        PyObject *specs, long t, int has_children) {
    shape *s = shape_for(w, native_shape, specs, t, has_children);
    if (!s) return FAIL;
    if (s->n < 0 || PyTuple_GET_SIZE(values) != s->n) return DECLINE;
    if (!s->code) {
        s->code = PyObject_CallMethodOneArg(enc, s_shape_code, PyTuple_GET_ITEM(s->result, 0));
        if (!s->code) return FAIL;
        if (!PyBytes_Check(s->code)) { Py_CLEAR(s->code); return DECLINE; }
    }
    Py_ssize_t pos = here(w);
    PyObject *key = PyLong_FromVoidPtr(die), *at = PyLong_FromSsize_t(pos);
    int rc = key && at ? PyDict_SetDefault(w->mine, key, at) == at : -1;
    Py_XDECREF(key);
    Py_XDECREF(at);
    if (rc < 0) return FAIL;
    if (!rc) return DECLINE; /* a DIE met twice: the tree is not a tree */
    if (grow((void **)&w->breaks, &w->capbreaks, w->nbreaks, sizeof *w->breaks) < 0) return FAIL;
    w->breaks[w->nbreaks++] = pos;
    if (buffer_put(&w->out, PyBytes_AS_STRING(s->code), (size_t)PyBytes_GET_SIZE(s->code)) < 0) return FAIL;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        rc = write_value(w, PyTuple_GET_ITEM(values, i), &s->entries[i]);
        if (rc != OK) return rc;
    }
    return OK;
}

typedef struct {
    PyObject *list;
    Py_ssize_t index;
} level;

/* The tree at ``root`` in pre-order, a null entry closing each child list. */
static int write_tree(writer *w, PyObject *root, PyObject *enc, PyObject *native_shape) {
    level *stack = NULL;
    size_t depth = 0, cap = 0;
    PyObject *die = root;
    Py_INCREF(die);
    int rc = OK;
    while (rc == OK) {
        if (die) {
            rc = write_die(w, die, enc, native_shape);
            if (rc != OK) break;
            PyObject *children = slot(die, M.children), *hc = slot(die, M.has_children);
            if (!children || !PyList_CheckExact(children) || !hc || !PyBool_Check(hc)) { rc = DECLINE; break; }
            if (PyList_GET_SIZE(children) > 0) {
                if (grow((void **)&stack, &cap, depth, sizeof *stack) < 0) { rc = FAIL; break; }
                Py_INCREF(children);
                stack[depth++] = (level){children, 0};
                Py_SETREF(die, PyList_GET_ITEM(children, 0));
                Py_INCREF(die);
                continue;
            }
            if (hc == Py_True && buffer_byte(&w->out, 0) < 0) { rc = FAIL; break; }
            Py_CLEAR(die);
        }
        if (!depth) break;
        level *top = &stack[depth - 1];
        if (++top->index < PyList_GET_SIZE(top->list)) {
            die = PyList_GET_ITEM(top->list, top->index);
            Py_INCREF(die);
        } else {
            Py_DECREF(top->list);
            depth--;
            if (buffer_byte(&w->out, 0) < 0) rc = FAIL;
        }
    }
    Py_XDECREF(die);
    while (depth) Py_DECREF(stack[--depth].list);
    PyMem_Free(stack);
    return rc;
}

/* Give every strp reference its symbol, in the order the reference asks the pool for them. */
static int resolve_strps(writer *w, PyObject *pool) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(w->strps); i++) {
        PyObject *item = PyList_GET_ITEM(w->strps, i);
        PyObject *symbol = PyObject_CallMethodOneArg(pool, s_symbol, PyTuple_GET_ITEM(item, 2));
        if (!symbol) return -1;
        PyObject *r = new_reloc(PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 1)), 4, symbol);
        Py_DECREF(symbol);
        if (!r) return -1;
        PyList_SetItem(w->relocs, PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0)), r);
    }
    return 0;
}

static int commit(writer *w, PyObject *out, PyObject *breaks, PyObject *fields, PyObject *fixups,
                  PyObject *relocs) {
    Py_ssize_t size = PyByteArray_GET_SIZE(out);
    if (PyByteArray_Resize(out, size + (Py_ssize_t)w->out.len) < 0) return -1;
    if (w->out.len) memcpy(PyByteArray_AS_STRING(out) + size, w->out.data, w->out.len);
    if (PyDict_Update(w->offsets, w->mine) < 0) return -1;
    for (size_t i = 0; i < w->nbreaks; i++) {
        PyObject *b = PyLong_FromSsize_t(w->breaks[i]);
        if (!b || PyList_Append(breaks, b) < 0) { Py_XDECREF(b); return -1; }
        Py_DECREF(b);
    }
    for (size_t i = 0; i < w->nfields; i++) {
        PyObject *at = PyLong_FromSsize_t(w->fields[i][0]), *n = PyLong_FromSsize_t(w->fields[i][1]);
        int rc = at && n ? PyDict_SetItem(fields, at, n) : -1;
        Py_XDECREF(at);
        Py_XDECREF(n);
        if (rc < 0) return -1;
    }
    Py_ssize_t nf = PyList_GET_SIZE(fixups), nr = PyList_GET_SIZE(relocs);
    if (PyList_SetSlice(fixups, nf, nf, w->fixups) < 0 || PyList_SetSlice(relocs, nr, nr, w->relocs) < 0) return -1;
    return 0;
}

static PyObject *attr_of(PyObject *obj, PyObject *name, PyTypeObject *type) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v && type && !Py_IS_TYPE(v, type)) Py_CLEAR(v);
    if (!v) PyErr_Clear();
    return v;
}

static PyObject *write_dies(PyObject *self, PyObject *args) {
    PyObject *enc, *root, *kept;
    if (!PyArg_ParseTuple(args, "OOO", &enc, &root, &kept)) return NULL;
    if (!M.bound || kept != Py_None) Py_RETURN_NONE;
    PyObject *out = attr_of(enc, s_out, &PyByteArray_Type), *offsets = attr_of(enc, s_offsets, &PyDict_Type),
             *breaks = attr_of(enc, s_breaks, &PyList_Type), *fields = attr_of(enc, s_fields, &PyDict_Type),
             *fixups = attr_of(enc, s_fixups, &PyList_Type), *relocs = attr_of(enc, s_relocs, &PyList_Type),
             *unit_start = attr_of(enc, s_unit_start, &PyLong_Type), *pool = attr_of(enc, s_pool, NULL),
             *expressions = attr_of(enc, s_expressions, NULL),
             *loc_offsets = attr_of(enc, s_loc_offsets, &PyDict_Type), *options = attr_of(enc, s_options, NULL),
             *native_shape = attr_of(enc, s_native_shape, NULL);
    PyObject *by_id = expressions ? attr_of(expressions, s_by_id, &PyDict_Type) : NULL;
    PyObject *strings = options ? attr_of(options, s_strings, &PyUnicode_Type) : NULL;
    PyObject *result = Py_None;
    writer w = {0};
    if (!out || !offsets || !breaks || !fields || !fixups || !relocs || !unit_start || !pool || !by_id ||
        !loc_offsets || !strings || !native_shape)
        goto done;
    w.base = PyByteArray_GET_SIZE(out);
    w.unit_start = PyLong_AsSsize_t(unit_start);
    if (w.unit_start == -1 && PyErr_Occurred()) { PyErr_Clear(); goto done; }
    w.offsets = offsets;
    w.by_id = by_id;
    w.expressions = expressions;
    w.loc_offsets = loc_offsets;
    w.strp_numbers = PyUnicode_CompareWithASCIIString(strings, "strp") == 0;
    w.mine = PyDict_New();
    w.fixups = PyList_New(0);
    w.relocs = PyList_New(0);
    w.strps = PyList_New(0);
    if (!w.mine || !w.fixups || !w.relocs || !w.strps) { result = NULL; goto done; }
    int rc = write_tree(&w, root, enc, native_shape);
    if (rc == FAIL) { result = NULL; goto done; }
    if (rc == DECLINE || PyByteArray_GET_SIZE(out) != w.base) goto done;
    if (resolve_strps(&w, pool) < 0 || commit(&w, out, breaks, fields, fixups, relocs) < 0) {
        result = NULL;
        goto done;
    }
    result = Py_True;
done:
    Py_XINCREF(result);
    Py_XDECREF(out); Py_XDECREF(offsets); Py_XDECREF(breaks); Py_XDECREF(fields); Py_XDECREF(fixups);
    Py_XDECREF(relocs); Py_XDECREF(unit_start); Py_XDECREF(pool); Py_XDECREF(expressions);
    Py_XDECREF(loc_offsets); Py_XDECREF(options); Py_XDECREF(native_shape); Py_XDECREF(by_id);
    Py_XDECREF(strings);
    Py_XDECREF(w.mine); Py_XDECREF(w.fixups); Py_XDECREF(w.relocs); Py_XDECREF(w.strps);
    buffer_free(&w.out);
    PyMem_Free(w.breaks);
    PyMem_Free(w.fields);
    shapes_free(&w.shapes);
    return result;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(BuiltDIE, DIE, Symbol, Reloc, LocationList, Block): the classes write_dies knows."},
    {"write_dies", write_dies, METH_VARARGS,
     "write_dies(encoder, root, kept): append the built DIE tree at root to the encoder's .debug_info; True, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "encode", "The DIE encoder's hot loop.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_encode(void) {
    struct { PyObject **name; const char *text; } names[] = {
        {&s_out, "out"}, {&s_offsets, "offsets"}, {&s_breaks, "breaks"}, {&s_fields, "fields"},
        {&s_fixups, "fixups"}, {&s_relocs, "relocs"}, {&s_unit_start, "unit_start"}, {&s_pool, "pool"},
        {&s_symbol, "symbol"}, {&s_expressions, "expressions"}, {&s_by_id, "by_id"}, {&s_get, "get"},
        {&s_loc_offsets, "loc_offsets"}, {&s_options, "options"}, {&s_strings, "strings"},
        {&s_native_shape, "native_shape"}, {&s_shape_code, "shape_code"}, {&s_offset, "offset"},
        {&s_value, "value"}, {&s_relocs_attr, "relocs"}, {&s_debug_loc, ".debug_loc"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        *names[i].name = PyUnicode_InternFromString(names[i].text);
        if (!*names[i].name) return NULL;
    }
    return PyModule_Create(&module);
}
