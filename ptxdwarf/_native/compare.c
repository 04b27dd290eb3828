/* The kernels of check's comparison: the twins of ptxdwarf.check.sections.placed_entries and
 * ptxdwarf.check.lines.labels_apart. */
#include "common.h"

/* placed_in_order of ptxdwarf.check.expect: 1, 0, or -1 with an exception set; 2 when a Symbol
 * has a slot unset (the kernel declines). */
static int placed_in_order(PyTypeObject *symbol_type, const symbol_fields *f, PyObject *begin_function,
                           PyObject *end_function, PyObject *got_begin, PyObject *got_end, PyObject *zero) {
    if (begin_function == Py_None || Py_TYPE(got_begin) != symbol_type || Py_TYPE(got_end) != symbol_type) return 0;
    PyObject *bn = SLOT(got_begin, f->name), *ba = SLOT(got_begin, f->addend);
    PyObject *en = SLOT(got_end, f->name), *ea = SLOT(got_end, f->addend);
    if (!bn || !ba || !en || !ea) return 2;
    int r = PyObject_RichCompareBool(bn, begin_function, Py_EQ);
    if (r <= 0) return r;
    if ((r = PyObject_RichCompareBool(ba, zero, Py_NE)) <= 0) return r;
    if ((r = PyObject_RichCompareBool(en, end_function, Py_EQ)) <= 0) return r;
    if ((r = PyObject_RichCompareBool(ea, zero, Py_NE)) <= 0) return r;
    if ((r = PyObject_RichCompareBool(bn, en, Py_NE)) != 0) return r;
    return PyObject_RichCompareBool(ba, ea, Py_LE);
}

/* _expression_to_compare of ptxdwarf.check.sections: 1, 0, -1 with an exception set, 2 to
 * decline (not bytes). */
static int expression_to_compare(PyObject *ptx, PyObject *cubin, PyObject *relocs_name) {
    if (!PyBytes_Check(ptx) || !PyBytes_Check(cubin)) return 2;
    PyObject *relocs = PyObject_GetAttr(ptx, relocs_name);
    if (!relocs) return -1;
    int r = PyObject_IsTrue(relocs);
    Py_DECREF(relocs);
    if (r != 0) return r;
    if (!(relocs = PyObject_GetAttr(cubin, relocs_name))) return -1;
    r = PyObject_IsTrue(relocs);
    Py_DECREF(relocs);
    if (r != 0) return r;
    Py_ssize_t n = PyBytes_GET_SIZE(ptx);
    return n != PyBytes_GET_SIZE(cubin) || memcmp(PyBytes_AS_STRING(ptx), PyBytes_AS_STRING(cubin), (size_t)n) != 0;
}

/* ptxdwarf.dwarf.image.Symbol and its slots, read on the first call that finds them (NULL
 * until then: a call before the module can be imported declines). */
static PyTypeObject *symbol_class;
static symbol_fields symbol_slots;

static int load(void) {
    if (symbol_class) return 0;
    PyTypeObject *t = imported_type("ptxdwarf.dwarf.image", "Symbol");
    if (!t) return -1;
    if (symbol_fields_of(t, &symbol_slots) < 0) {
        Py_DECREF(t);
        return -1;
    }
    symbol_class = t;
    return 0;
}

/* placed_entries(entries, got, functions, placed): (count, rest), or None to leave
 * the call to the reference (an entry that is not what it unpacks, a Symbol with a slot unset,
 * an expression that is not bytes, or any error). A call declined part way has put in placed
 * what the reference puts again, the same values in the same order. */
static PyObject *placed_entries(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1]) || !PyList_CheckExact(args[2]) ||
        !PyDict_CheckExact(args[3]))
        Py_RETURN_NONE;
    if (load() < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    symbol_fields f = symbol_slots;
    PyObject *entries = args[0], *got = args[1], *functions = args[2], *placed = args[3];
    Py_ssize_t n = PyList_GET_SIZE(entries);
    if (PyList_GET_SIZE(got) < n) n = PyList_GET_SIZE(got);
    if (PyList_GET_SIZE(functions) < n) n = PyList_GET_SIZE(functions);
    PyObject *zero = PyLong_FromLong(0), *relocs_name = PyUnicode_InternFromString("relocs");
    PyObject *rest = PyList_New(0), *out = NULL;
    Py_ssize_t count = 0;
    if (!zero || !relocs_name || !rest) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *mine = PyList_GET_ITEM(entries, k), *theirs = PyList_GET_ITEM(got, k);
        PyObject *pair = PyList_GET_ITEM(functions, k);
        if (!PyTuple_CheckExact(mine) || PyTuple_GET_SIZE(mine) != 3 || !PyTuple_CheckExact(theirs) ||
            PyTuple_GET_SIZE(theirs) != 3 || !PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2)
            goto decline;
        PyObject *b0 = PyTuple_GET_ITEM(mine, 0), *e0 = PyTuple_GET_ITEM(mine, 1), *x0 = PyTuple_GET_ITEM(mine, 2);
        PyObject *b1 = PyTuple_GET_ITEM(theirs, 0), *e1 = PyTuple_GET_ITEM(theirs, 1), *x1 = PyTuple_GET_ITEM(theirs, 2);
        int in_order = placed_in_order(symbol_class, &f, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1), b1, e1, zero);
        if (in_order < 0) goto fail;
        if (in_order == 2) goto decline;
        if (in_order) {
            count += 2;
            /* placed_in_order: b1 and e1 are Symbols; b0 and e0 are code labels, Symbols too,
             * unless the reference's look-up of .name is to fail */
            if (Py_TYPE(b0) != symbol_class || Py_TYPE(e0) != symbol_class) goto decline;
            PyObject *bn = SLOT(b0, f.name), *en = SLOT(e0, f.name);
            if (!bn || !en) goto decline;
            if (PyDict_SetItem(placed, bn, b1) < 0 || PyDict_SetItem(placed, en, e1) < 0) goto fail;
        }
        int look = !in_order;
        if (!look && x0 != Py_None && x1 != Py_None) {
            look = expression_to_compare(x0, x1, relocs_name);
            if (look < 0) goto fail;
            if (look == 2) goto decline;
        }
        if (look) {
            PyObject *index = PyLong_FromSsize_t(k);
            if (!index || PyList_Append(rest, index) < 0) {
                Py_XDECREF(index);
                goto fail;
            }
            Py_DECREF(index);
        }
    }
    out = Py_BuildValue("(nO)", count, rest);
    goto done;
fail:
    PyErr_Clear();
decline:
    out = Py_NewRef(Py_None);
done:
    Py_XDECREF(zero);
    Py_XDECREF(relocs_name);
    Py_XDECREF(rest);
    return out;
}

/* An exact int that fits in 64 bits, into *v: 0, or -1 (no error set) for anything else. */
static int small_int(PyObject *o, long long *v) {
    if (!PyLong_CheckExact(o)) return -1;
    int overflow = 0;
    *v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (*v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

typedef struct {
    long long line, address;
} line_start;

static int by_line(const void *a, const void *b) {
    long long x = ((const line_start *)a)->line, y = ((const line_start *)b)->line;
    return (x > y) - (x < y);
}

/* labels_apart(labels, placed, function, named, found_lines, end, body_line): the reference's
 * list, or None to leave the call to it (a value that is not what it reads: a relocation that is
 * not a Symbol, a line or address that is not an int of 64 bits, or any error). */
static PyObject *labels_apart(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    long long end, body_line;
    if (nargs != 7 || !PyDict_CheckExact(args[0]) || !PyDict_CheckExact(args[1]) || !PyUnicode_CheckExact(args[2]) ||
        !PyAnySet_Check(args[3]) || !PyDict_CheckExact(args[4]) || small_int(args[5], &end) < 0 ||
        small_int(args[6], &body_line) < 0)
        Py_RETURN_NONE;
    if (load() < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *labels = args[0], *placed = args[1], *function = args[2], *named = args[3], *found = args[4];
    line_start *starts = NULL;
    Py_ssize_t n = -1; /* the starts, sorted by line, once a label asks for them */
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    Py_ssize_t pos = 0;
    PyObject *label, *line_obj;
    while (PyDict_Next(labels, &pos, &label, &line_obj)) {
        PyObject *got = PyDict_GetItemWithError(placed, label);
        if (!got) {
            if (PyErr_Occurred()) goto fail;
            continue;
        }
        if (Py_TYPE(got) != symbol_class) goto decline;
        PyObject *name = SLOT(got, symbol_slots.name), *addend_obj = SLOT(got, symbol_slots.addend);
        if (!name || !addend_obj) goto decline;
        int r = PyObject_RichCompareBool(name, function, Py_NE);
        if (r < 0) goto fail;
        if (r) continue;
        if ((r = PySet_Contains(named, label)) < 0) goto fail;
        if (r) continue;
        if (n < 0) {
            n = PyDict_GET_SIZE(found);
            starts = PyMem_Malloc(sizeof(line_start) * (size_t)(n ? n : 1));
            if (!starts) goto fail;
            Py_ssize_t at = 0, k = 0;
            PyObject *key, *value;
            while (PyDict_Next(found, &at, &key, &value)) {
                if (small_int(key, &starts[k].line) < 0 || small_int(value, &starts[k].address) < 0) goto decline;
                k++;
            }
            qsort(starts, (size_t)n, sizeof(line_start), by_line);
        }
        long long line, addend;
        if (small_int(line_obj, &line) < 0 || small_int(addend_obj, &addend) < 0) goto decline;
        int kind;
        long long above = 0;
        if (end && addend == end && (n == 0 || starts[n - 1].line > line)) {
            if (n == 0) goto decline; /* the reference's with_code[-1] fails */
            kind = 0;
        } else {
            Py_ssize_t lo = 0, hi = n; /* the first start at or after line */
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (starts[mid].line < line) lo = mid + 1;
                else hi = mid;
            }
            Py_ssize_t i = lo - 1;
            if (i < 0 || starts[i].line <= body_line) continue;
            above = starts[i].line;
            if (addend == starts[i].address) kind = 1;
            else if (addend < starts[i].address) kind = 2;
            else continue;
        }
        PyObject *item = Py_BuildValue("(OOOiL)", label, line_obj, got, kind, above);
        if (!item) goto fail;
        r = PyList_Append(out, item);
        Py_DECREF(item);
        if (r < 0) goto fail;
    }
    PyMem_Free(starts);
    return out;
fail:
    PyErr_Clear();
decline:
    PyMem_Free(starts);
    Py_DECREF(out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"labels_apart", (PyCFunction)(void (*)(void))labels_apart, METH_FASTCALL,
     "The twin of ptxdwarf.check.lines.labels_apart."},
    {"placed_entries", (PyCFunction)(void (*)(void))placed_entries, METH_FASTCALL,
     "The twin of ptxdwarf.check.sections.placed_entries."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "compare", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_compare(void) { return PyModule_Create(&module); }
