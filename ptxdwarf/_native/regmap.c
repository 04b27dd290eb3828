/* The register map's ranges by register: the twin of ptxdwarf.cuda.regmap._register_ranges.
 * Per register name asked for that one function's entries in .nv_debug_info_reg_sass name,
 * (index, low PC, high PC, piece) of each of its entries and the pieces of those whose range
 * is nonempty; spans that do not lie inside the data (a piece before a name, a name's NUL and
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

/* The set's bytes object equal to the n bytes at p (borrowed), or NULL. */
static PyObject *table_find(const name_table *t, const uint8_t *p, Py_ssize_t n) {
    uint64_t h = hash_of(p, n);
    for (size_t i = (size_t)h & t->mask; t->keys[i]; i = (i + 1) & t->mask) {
        PyObject *key = t->keys[i];
        if (t->hashes[i] == h && PyBytes_GET_SIZE(key) == n && memcmp(PyBytes_AS_STRING(key), p, (size_t)n) == 0)
            return key;
    }
    return NULL;
}

static void table_free(name_table *t) {
    PyMem_Free(t->keys);
    PyMem_Free(t->hashes);
}

/* Appends (index, low, high, piece) to the name's list in found, and the piece to its set
 * in pieces when the range is nonempty; -1 a Python error. */
static int add_entry(PyObject *found, PyObject *pieces, PyObject *name, Py_ssize_t index, uint32_t low,
                     uint32_t high, uint32_t piece) {
    PyObject *ranges = PyDict_GetItemWithError(found, name);
    PyObject *set = NULL;
    if (ranges == NULL) {
        if (PyErr_Occurred()) return -1;
        PyObject *fresh = PyList_New(0);
        if (!fresh) return -1;
        int r = PyDict_SetItem(found, name, fresh);
        Py_DECREF(fresh);
        if (r < 0) return -1;
        ranges = fresh;
        PyObject *fresh_set = PySet_New(NULL);
        if (!fresh_set) return -1;
        r = PyDict_SetItem(pieces, name, fresh_set);
        Py_DECREF(fresh_set);
        if (r < 0) return -1;
        set = fresh_set;
    }
    PyObject *entry = Py_BuildValue("(nIII)", index, (unsigned int)low, (unsigned int)high, (unsigned int)piece);
    if (!entry) return -1;
    int r = PyList_Append(ranges, entry);
    Py_DECREF(entry);
    if (r < 0) return -1;
    if (low < high) {
        if (set == NULL) {
            set = PyDict_GetItemWithError(pieces, name);
            if (set == NULL) return PyErr_Occurred() ? -1 : 0;
        }
        PyObject *p = PyLong_FromUnsignedLong(piece);
        if (!p) return -1;
        r = PySet_Add(set, p);
        Py_DECREF(p);
        if (r < 0) return -1;
    }
    return 0;
}

/* found and pieces joined: name -> (ranges, frozenset(pieces)). */
static PyObject *joined(PyObject *found, PyObject *pieces) {
    PyObject *result = PyDict_New();
    if (!result) return NULL;
    PyObject *name, *ranges;
    Py_ssize_t pos = 0;
    while (PyDict_Next(found, &pos, &name, &ranges)) {
        PyObject *set = PyDict_GetItemWithError(pieces, name);
        PyObject *frozen = set ? PyFrozenSet_New(set) : NULL;
        PyObject *pair = frozen ? PyTuple_Pack(2, ranges, frozen) : NULL;
        Py_XDECREF(frozen);
        if (!pair || PyDict_SetItem(result, name, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(pair);
    }
    return result;
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
    PyObject *found = PyDict_New(), *pieces = PyDict_New(), *result = NULL;
    if (!found || !pieces) goto done;
    int made = table_of(&names, args[2]);
    if (made <= 0) {
        if (made == 0) result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(args[1]) / 16;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t start, end;
        if (!read_span(spans, i, size, &start, &end)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *name = table_find(&names, data + start, end - start);
        if (!name) continue;
        /* end + 13 <= size: the NUL, then u32 SASS register, low and high PC */
        const uint8_t *at = data + end + 1;
        if (add_entry(found, pieces, name, i, le32(at + 4), le32(at + 8), le32(data + start - 4)) < 0) goto done;
    }
    result = joined(found, pieces);
done:
    table_free(&names);
    Py_XDECREF(found);
    Py_XDECREF(pieces);
    return result;
}

static PyMethodDef methods[] = {
    {"_register_ranges", (PyCFunction)(void (*)(void))_register_ranges, METH_FASTCALL,
     "The twin of ptxdwarf.cuda.regmap._register_ranges."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "regmap", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_regmap(void) { return PyModule_Create(&module); }
