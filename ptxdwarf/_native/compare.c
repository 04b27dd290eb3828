/* The kernels of check's comparison: the twin of ptxdwarf.check.sections.placed_entries. */
#include "common.h"

/* A slot of a Symbol (borrowed; NULL when unset). */
static inline PyObject *slot(PyObject *symbol, Py_ssize_t offset) { return *(PyObject **)((char *)symbol + offset); }

/* placed_in_order of ptxdwarf.check.expect: 1, 0, or -1 with an exception set; 2 when a Symbol
 * has a slot unset (the kernel declines). */
static int placed_in_order(PyTypeObject *symbol_type, const symbol_fields *f, PyObject *begin_function,
                           PyObject *end_function, PyObject *got_begin, PyObject *got_end, PyObject *zero) {
    if (begin_function == Py_None || Py_TYPE(got_begin) != symbol_type || Py_TYPE(got_end) != symbol_type) return 0;
    PyObject *bn = slot(got_begin, f->name), *ba = slot(got_begin, f->addend);
    PyObject *en = slot(got_end, f->name), *ea = slot(got_end, f->addend);
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
    PyObject *m = PyImport_ImportModule("ptxdwarf.dwarf.image");
    if (!m) return -1;
    PyObject *t = PyObject_GetAttrString(m, "Symbol");
    Py_DECREF(m);
    if (!t) return -1;
    if (!PyType_Check(t) || symbol_fields_of((PyTypeObject *)t, &symbol_slots) < 0) {
        Py_DECREF(t);
        return -1;
    }
    symbol_class = (PyTypeObject *)t;
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
            PyObject *bn = slot(b0, f.name), *en = slot(e0, f.name);
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

static PyMethodDef methods[] = {
    {"placed_entries", (PyCFunction)(void (*)(void))placed_entries, METH_FASTCALL,
     "The twin of ptxdwarf.check.sections.placed_entries."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "compare", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_compare(void) { return PyModule_Create(&module); }
