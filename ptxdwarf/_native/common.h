/* What every kernel of the native core shares: reading bytes within bounds, growing a
 * buffer. A cursor that runs past its end is marked bad and reads zeros from then on, so
 * that a kernel checks once, at the end of a record, instead of at every read. */
#ifndef PTXDWARF_NATIVE_COMMON_H
#define PTXDWARF_NATIVE_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

typedef struct {
    const uint8_t *start, *p, *end;
    int bad;
} cursor;

static inline cursor cursor_of(const uint8_t *data, Py_ssize_t size, Py_ssize_t offset) {
    cursor c = {data, data + (offset < 0 ? size : (offset > size ? size : offset)), data + size, 0};
    if (offset < 0 || offset > size) c.bad = 1;
    return c;
}

static inline Py_ssize_t cursor_offset(const cursor *c) { return c->p - c->start; }

static inline int cursor_has(const cursor *c, Py_ssize_t n) { return !c->bad && n >= 0 && c->end - c->p >= n; }

/* An unsigned little-endian integer of n (1-8) bytes. */
static inline uint64_t cursor_fixed(cursor *c, int n) {
    if (!cursor_has(c, n)) { c->bad = 1; c->p = c->end; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

/* ULEB128; past 64 bits of value the high bits are dropped, as Python's reference masks them
 * (callers that need the exact value of a long one hand it to the reference). */
static inline uint64_t cursor_uleb(cursor *c, int *overflow) {
    uint64_t v = 0;
    int shift = 0;
    while (1) {
        if (c->bad || c->p >= c->end) { c->bad = 1; c->p = c->end; return 0; }
        uint8_t byte = *c->p++;
        if (shift < 64) v |= (uint64_t)(byte & 0x7f) << shift;
        else if ((byte & 0x7f) && overflow) *overflow = 1;
        if (shift == 63 && (byte & 0x7e) && overflow) *overflow = 1;
        shift += 7;
        if (!(byte & 0x80)) return v;
    }
}

/* SLEB128; a value that does not fit in 64 bits sets *overflow. */
static inline int64_t cursor_sleb(cursor *c, int *overflow) {
    uint64_t v = 0;
    int shift = 0;
    uint8_t byte;
    do {
        if (c->bad || c->p >= c->end) { c->bad = 1; c->p = c->end; return 0; }
        byte = *c->p++;
        uint64_t low = byte & 0x7f;
        if (shift < 63) v |= low << shift;
        else if (shift == 63) {
            v |= low << 63;
            if (low != 0 && low != 0x7f && overflow) *overflow = 1;
        } else if (low != ((v >> 63) ? 0x7f : 0) && overflow) *overflow = 1;
        shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40)) v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A growable byte buffer. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} buffer;

static inline int buffer_reserve(buffer *b, size_t more) {
    if (b->cap - b->len >= more) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > ((size_t)PY_SSIZE_T_MAX) / 2) { PyErr_NoMemory(); return -1; }
        cap *= 2;
    }
    uint8_t *data = PyMem_Realloc(b->data, cap);
    if (!data) { PyErr_NoMemory(); return -1; }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buffer_put(buffer *b, const void *data, size_t n) {
    if (buffer_reserve(b, n) < 0) return -1;
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return 0;
}

static inline int buffer_byte(buffer *b, uint8_t byte) { return buffer_put(b, &byte, 1); }

static inline void buffer_free(buffer *b) {
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* The buffer's bytes as a new bytes object (the buffer keeps its memory). */
static inline PyObject *buffer_bytes(const buffer *b) {
    return PyBytes_FromStringAndSize((const char *)b->data, (Py_ssize_t)b->len);
}

/* The object a slot of obj holds, at offset (slot_offset; borrowed, NULL when unset). */
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* module.name, imported (a new reference; NULL with an exception set). */
static inline PyObject *imported(const char *module, const char *name) {
    PyObject *m = PyImport_ImportModule(module);
    if (!m) return NULL;
    PyObject *v = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    return v;
}

/* imported(module, name), which must be a class. */
static inline PyTypeObject *imported_type(const char *module, const char *name) {
    PyObject *v = imported(module, name);
    if (v && !PyType_Check(v)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a class", module, name);
        Py_CLEAR(v);
    }
    return (PyTypeObject *)v;
}

/* Where the slot ``name`` of a class defined in Python lives in its instances. */
static inline int slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *d = PyObject_GetAttrString((PyObject *)type, name);
    if (!d) return -1;
    int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) && ((PyMemberDescrObject *)d)->d_member->type == T_OBJECT_EX &&
             ((PyMemberDescrObject *)d)->d_common.d_type == type;
    if (ok) *offset = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    if (!ok) PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
    return ok ? 0 : -1;
}

/* Where the three slots of a Symbol class (ptxdwarf.dwarf.image.Symbol) live; -1 with an
 * exception set for a class that is not such (one with a __dict__, say). */
typedef struct {
    Py_ssize_t name, addend, value;
} symbol_fields;

static inline int symbol_fields_of(PyTypeObject *type, symbol_fields *fields) {
    if (type->tp_dictoffset != 0) {
        PyErr_Format(PyExc_TypeError, "%s has a __dict__", type->tp_name);
        return -1;
    }
    return slot_offset(type, "name", &fields->name) || slot_offset(type, "addend", &fields->addend) ||
                   slot_offset(type, "value", &fields->value)
               ? -1
               : 0;
}

/* A new Symbol of type holding name, addend and value (references it takes; NULL for any:
 * an error set), made as its __init__ makes one, which only stores the three: the hundreds of
 * thousands of a large module skip the Python call. A Symbol holds a string and ints and is
 * not changed, so it cannot be in a cycle: it is not tracked by the collector. */
static inline PyObject *new_symbol(PyTypeObject *type, const symbol_fields *fields, PyObject *name, PyObject *addend,
                                   PyObject *value) {
    PyObject *symbol = name && addend && value ? type->tp_alloc(type, 0) : NULL;
    if (!symbol) {
        Py_XDECREF(name);
        Py_XDECREF(addend);
        Py_XDECREF(value);
        return NULL;
    }
    *(PyObject **)((char *)symbol + fields->name) = name;
    *(PyObject **)((char *)symbol + fields->addend) = addend;
    *(PyObject **)((char *)symbol + fields->value) = value;
    if (PyObject_GC_IsTracked(symbol)) PyObject_GC_UnTrack(symbol);
    return symbol;
}

#endif
