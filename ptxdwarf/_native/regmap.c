/* The register map's ranges by register: the twin of ptxdwarf.cuda.regmap._register_ranges.
 * Per register name asked for that one function's entries in .nv_debug_info_reg_sass name,
 * the records (index, low PC, high PC, piece) of its entries, four little-endian u32 each, and
 * the pieces of those whose range is nonempty; spans that do not lie inside the data (a piece before a name, a name's NUL and
 * range after it) give None. */
#include "common.h"

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Little-endian u64 at p. */
static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

/* 1 when the i-th (start, end) pair of the packed spans lies inside size bytes (room for the
 * piece before the name, and the NUL and range after it); 0 when it does not. */
static int read_span(const uint8_t *spans, Py_ssize_t i, Py_ssize_t size, Py_ssize_t *start, Py_ssize_t *end) {
    uint64_t s = le64(spans + 16 * i), e = le64(spans + 16 * i + 8);
    if (size < 13 || s < 4 || e < s || e > (uint64_t)size - 13) return 0;
    *start = (Py_ssize_t)s;
    *end = (Py_ssize_t)e;
    return 1;
}

/* The names asked for: an open-addressing table of the set's bytes objects. */
typedef struct {
    PyObject **keys;
    uint64_t *hashes;
    size_t mask;
} name_table;

static uint64_t hash_of(const uint8_t *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* 1 made, 0 a set with other than bytes in it, -1 a Python error. */
static int table_of(name_table *t, PyObject *names) {
    size_t want = 8;
    while (want < (size_t)PySet_GET_SIZE(names) * 2 + 1) want <<= 1;
    t->keys = PyMem_Calloc(want, sizeof(PyObject *));
    t->hashes = PyMem_Calloc(want, sizeof(uint64_t));
    t->mask = want - 1;
    if (!t->keys || !t->hashes) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *iter = PyObject_GetIter(names), *key;
    if (!iter) return -1;
    int made = 1;
    while ((key = PyIter_Next(iter))) {
        if (!PyBytes_CheckExact(key)) {
            Py_DECREF(key);
            made = 0;
            break;
        }
        uint64_t h = hash_of((const uint8_t *)PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
        size_t i = (size_t)h & t->mask;
        while (t->keys[i]) i = (i + 1) & t->mask;
        t->keys[i] = key; /* the set holds it while the table is used */
        t->hashes[i] = h;
        Py_DECREF(key);
    }
    Py_DECREF(iter);
    return PyErr_Occurred() ? -1 : made;
}

/* The slot of the set's bytes object equal to the n bytes at p, or -1. */
static Py_ssize_t table_slot(const name_table *t, const uint8_t *p, Py_ssize_t n) {
    uint64_t h = hash_of(p, n);
    for (size_t i = (size_t)h & t->mask; t->keys[i]; i = (i + 1) & t->mask) {
        PyObject *key = t->keys[i];
        if (t->hashes[i] == h && PyBytes_GET_SIZE(key) == n && memcmp(PyBytes_AS_STRING(key), p, (size_t)n) == 0)
            return (Py_ssize_t)i;
    }
    return -1;
}

static void table_free(name_table *t) {
    PyMem_Free(t->keys);
    PyMem_Free(t->hashes);
}

/* What one name asked for has gathered: its entries' records, little-endian u32 (index, low,
 * high, piece) each, and the pieces of those whose range is nonempty (below 32 as bits, any
 * other in a set). */
typedef struct {
    uint8_t *records;
    Py_ssize_t length, room;
    uint32_t pieces;
    PyObject *more_pieces;
    int seen;
} gathered;

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* 0, or -1 a Python error. */
static int gather(gathered *g, Py_ssize_t index, uint32_t low, uint32_t high, uint32_t piece) {
    if (index > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "register map entry index past u32");
        return -1;
    }
    if (g->length + 16 > g->room) {
        Py_ssize_t room = g->room ? 2 * g->room : 64;
        uint8_t *grown = PyMem_Realloc(g->records, (size_t)room);
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        g->records = grown;
        g->room = room;
    }
    uint8_t *at = g->records + g->length;
    put32(at, (uint32_t)index);
    put32(at + 4, low);
    put32(at + 8, high);
    put32(at + 12, piece);
    g->length += 16;
    if (low < high) {
        if (piece < 32) {
            g->pieces |= (uint32_t)1 << piece;
        } else {
            if (!g->more_pieces && !(g->more_pieces = PySet_New(NULL))) return -1;
            PyObject *p = PyLong_FromUnsignedLong(piece);
            int r = p ? PySet_Add(g->more_pieces, p) : -1;
            Py_XDECREF(p);
            if (r < 0) return -1;
        }
    }
    return 0;
}

/* The frozensets of pieces below 8 with no others, made once: every register has one of a
 * few (a 64-bit register pieces 0 and 1, any other 0). */
static PyObject *small_pieces[256];

/* A new reference to the frozenset of g's pieces. */
static PyObject *pieces_of(const gathered *g) {
    if (!g->more_pieces && g->pieces < 256) {
        PyObject **cached = &small_pieces[g->pieces];
        if (!*cached) {
            PyObject *set = PySet_New(NULL);
            for (uint32_t k = 0; set && k < 8; k++) {
                if (!(g->pieces & ((uint32_t)1 << k))) continue;
                PyObject *p = PyLong_FromUnsignedLong(k);
                if (!p || PySet_Add(set, p) < 0) Py_CLEAR(set);
                Py_XDECREF(p);
            }
            *cached = set ? PyFrozenSet_New(set) : NULL;
            Py_XDECREF(set);
            if (!*cached) return NULL;
        }
        return Py_NewRef(*cached);
    }
    PyObject *set = g->more_pieces ? PySet_New(g->more_pieces) : PySet_New(NULL);
    for (uint32_t k = 0; set && k < 32; k++) {
        if (!(g->pieces & ((uint32_t)1 << k))) continue;
        PyObject *p = PyLong_FromUnsignedLong(k);
        if (!p || PySet_Add(set, p) < 0) Py_CLEAR(set);
        Py_XDECREF(p);
    }
    PyObject *frozen = set ? PyFrozenSet_New(set) : NULL;
    Py_XDECREF(set);
    return frozen;
}

static PyObject *_register_ranges(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyBytes_CheckExact(args[0]) || !PyBytes_CheckExact(args[1]) || !PyAnySet_CheckExact(args[2]) ||
        PyBytes_GET_SIZE(args[1]) % 16)
        Py_RETURN_NONE;
    PyObject *data_obj = args[0];
    const uint8_t *spans = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(data_obj);
    Py_ssize_t size = PyBytes_GET_SIZE(data_obj);
    name_table names = {NULL, NULL, 0};
    gathered *by_slot = NULL;
    size_t *order = NULL, ordered = 0;
    PyObject *result = NULL, *found = NULL;
    int made = table_of(&names, args[2]);
    if (made <= 0) {
        if (made == 0) result = Py_NewRef(Py_None);
        goto done;
    }
    by_slot = PyMem_Calloc(names.mask + 1, sizeof(gathered));
    order = PyMem_Calloc(names.mask + 1, sizeof(size_t));
    if (!by_slot || !order) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(args[1]) / 16;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t start, end;
        if (!read_span(spans, i, size, &start, &end)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        Py_ssize_t slot = table_slot(&names, data + start, end - start);
        if (slot < 0) continue;
        gathered *g = &by_slot[slot];
        if (!g->seen) {
            g->seen = 1;
            order[ordered++] = (size_t)slot;
        }
        /* end + 13 <= size: the NUL, then u32 SASS register, low and high PC */
        const uint8_t *at = data + end + 1;
        if (gather(g, i, le32(at + 4), le32(at + 8), le32(data + start - 4)) < 0) goto done;
    }
    found = PyDict_New();
    for (size_t k = 0; found && k < ordered; k++) {
        const gathered *g = &by_slot[order[k]];
        PyObject *records = PyBytes_FromStringAndSize((const char *)g->records, g->length);
        PyObject *pieces = records ? pieces_of(g) : NULL;
        PyObject *pair = pieces ? PyTuple_Pack(2, records, pieces) : NULL;
        if (!pair || PyDict_SetItem(found, names.keys[order[k]], pair) < 0) Py_CLEAR(found);
        Py_XDECREF(records);
        Py_XDECREF(pieces);
        Py_XDECREF(pair);
    }
    result = found;
done:
    if (by_slot) {
        for (size_t k = 0; k <= names.mask; k++) {
            PyMem_Free(by_slot[k].records);
            Py_XDECREF(by_slot[k].more_pieces);
        }
    }
    PyMem_Free(by_slot);
    PyMem_Free(order);
    table_free(&names);
    return result;
}

static PyMethodDef methods[] = {
    {"_register_ranges", (PyCFunction)(void (*)(void))_register_ranges, METH_FASTCALL,
     "The twin of ptxdwarf.cuda.regmap._register_ranges."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "regmap", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_regmap(void) { return PyModule_Create(&module); }
