/* The kernels of check's comparison: the twins of ptxdwarf.check.sections.placed_entries,
 * ptxdwarf.check.lines.labels_apart and ptxdwarf.check.walk.walk_by_sites. */
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

/* What walk_by_sites reads of the model's classes, read on its first call. */
static PyTypeObject *die_class, *attribute_class, *reloc_class, *block_class;
static Py_ssize_t die_attributes, attribute_relocs, attribute_value;
static PyObject *s_attributes, *s_relocs, *s_value, *s_symbol, *s_name, *s_addend;

static int load_model(void) {
    if (die_class) return 0;
    if (load() < 0) return -1;
    PyTypeObject *die = imported_type("ptxdwarf.dwarf.model", "DIE");
    PyTypeObject *attribute = die ? imported_type("ptxdwarf.dwarf.model", "Attribute") : NULL;
    PyTypeObject *reloc = attribute ? imported_type("ptxdwarf.dwarf.image", "Reloc") : NULL;
    PyTypeObject *block = reloc ? imported_type("ptxdwarf.dwarf.image", "Block") : NULL;
    if (!block || slot_offset(die, "attributes", &die_attributes) < 0 ||
        slot_offset(attribute, "relocs", &attribute_relocs) < 0 || slot_offset(attribute, "value", &attribute_value) < 0 ||
        !(s_attributes = PyUnicode_InternFromString("attributes")) || !(s_relocs = PyUnicode_InternFromString("relocs")) ||
        !(s_value = PyUnicode_InternFromString("value")) || !(s_symbol = PyUnicode_InternFromString("symbol")) ||
        !(s_name = PyUnicode_InternFromString("name")) || !(s_addend = PyUnicode_InternFromString("addend"))) {
        Py_XDECREF(die);
        Py_XDECREF(attribute);
        Py_XDECREF(reloc);
        Py_XDECREF(block);
        return -1;
    }
    attribute_class = attribute;
    reloc_class = reloc;
    block_class = block;
    die_class = die;
    return 0;
}

/* obj.name (a new reference), from its slot when obj is of the class that has it there. */
static PyObject *field(PyObject *obj, PyTypeObject *type, Py_ssize_t offset, PyObject *name) {
    if (Py_TYPE(obj) == type) {
        PyObject *v = SLOT(obj, offset);
        if (v) return Py_NewRef(v);
    }
    return PyObject_GetAttr(obj, name);
}

/* seq[k] (a new reference). */
static PyObject *item(PyObject *seq, PyObject *k) {
    if (PyList_CheckExact(seq) && PyLong_CheckExact(k)) {
        Py_ssize_t i = PyLong_AsSsize_t(k);
        if (i == -1 && PyErr_Occurred()) PyErr_Clear();
        else if (i >= 0 && i < PyList_GET_SIZE(seq)) return Py_NewRef(PyList_GET_ITEM(seq, i));
    }
    return PyObject_GetItem(seq, k);
}

/* relocs[0].symbol (a new reference). */
static PyObject *first_symbol(PyObject *relocs) {
    PyObject *first;
    if (PyTuple_CheckExact(relocs) && PyTuple_GET_SIZE(relocs)) {
        first = Py_NewRef(PyTuple_GET_ITEM(relocs, 0));
    } else {
        PyObject *zero = PyLong_FromLong(0);
        first = zero ? PyObject_GetItem(relocs, zero) : NULL;
        Py_XDECREF(zero);
        if (!first) return NULL;
    }
    PyObject *symbol;
    if (Py_TYPE(first) == reloc_class && PyTuple_GET_SIZE(first) == 3) symbol = Py_NewRef(PyTuple_GET_ITEM(first, 2));
    else symbol = PyObject_GetAttr(first, s_symbol);
    Py_DECREF(first);
    return symbol;
}

/* symbol.name or symbol.addend (a new reference). */
static PyObject *symbol_field(PyObject *symbol, int addend) {
    return field(symbol, symbol_class, addend ? symbol_slots.addend : symbol_slots.name, addend ? s_addend : s_name);
}

/* One attribute of the plan: 1 a symbol found where it must be (counted in *symbols or, for an
 * expression's, added to *more), 0 one for differ, -1 an error. What it reads of y, and when,
 * is what the reference reads. */
static int attribute_in_place(PyObject *y, PyObject *function, PyObject *offset, PyObject *label, PyObject *local,
                              PyObject *placed, PyObject *local_counts, PyObject *asize, Py_ssize_t *symbols,
                              PyObject **more) {
    PyObject *relocs = NULL, *value = NULL, *got = NULL, *v = NULL;
    int r = -1, has;
    if (function != Py_None) {
        if (!(relocs = field(y, attribute_class, attribute_relocs, s_relocs))) goto done;
        if ((has = PyObject_IsTrue(relocs)) < 0) goto done;
        if (has) {
            if (!(got = first_symbol(relocs)) || !(v = symbol_field(got, 0))) goto done;
            int same = PyObject_RichCompareBool(v, function, Py_EQ);
            if (same < 0) goto done;
            if (same) {
                Py_SETREF(v, symbol_field(got, 1));
                PyObject *zero = v ? PyLong_FromLong(0) : NULL;
                int moved = zero ? PyObject_RichCompareBool(v, zero, Py_NE) : -1;
                Py_XDECREF(zero);
                if (moved < 0) goto done;
                if (moved) {
                    if (!PyDict_SetDefault(placed, label, got)) goto done;
                    ++*symbols;
                    r = 1;
                    goto done;
                }
            }
            r = 0;
            goto done;
        }
        Py_CLEAR(relocs);
    }
    if (offset != Py_None) {
        if (!(value = field(y, attribute_class, attribute_value, s_value))) goto done;
        int same = PyObject_RichCompareBool(value, offset, Py_EQ);
        if (same < 0) goto done;
        if (same) {
            ++*symbols;
            if (!(relocs = field(y, attribute_class, attribute_relocs, s_relocs))) goto done;
            if ((has = PyObject_IsTrue(relocs)) < 0) goto done;
            if (has && (!(got = first_symbol(relocs)) || !PyDict_SetDefault(placed, label, got))) goto done;
            r = 1;
            goto done;
        }
    }
    if (local != Py_None) {
        if (!value && !(value = field(y, attribute_class, attribute_value, s_value))) goto done;
        if (Py_TYPE(value) == block_class) {
            PyObject *inner = PyObject_GetAttr(value, s_relocs);
            has = inner ? PyObject_IsTrue(inner) : -1;
            Py_XDECREF(inner);
            if (has < 0) goto done;
            if (!has) {
                PyObject *first = PySequence_GetItem(local, 0), *second = first ? PySequence_GetItem(local, 1) : NULL;
                PyObject *content =
                    second ? PyBytes_FromStringAndSize(PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value)) : NULL;
                PyObject *key = content ? PyTuple_Pack(4, first, content, second, asize) : NULL;
                Py_XDECREF(first);
                Py_XDECREF(second);
                Py_XDECREF(content);
                if (!key) goto done;
                PyObject *counted = PyDict_GetItemWithError(local_counts, key);
                Py_DECREF(key);
                if (!counted && PyErr_Occurred()) goto done;
                if (counted && counted != Py_None) {
                    PyObject *sum = PyNumber_InPlaceAdd(*more, counted);
                    if (!sum) goto done;
                    Py_SETREF(*more, sum);
                    r = 1;
                    goto done;
                }
            }
        }
    }
    r = 0;
done:
    Py_XDECREF(relocs);
    Py_XDECREF(value);
    Py_XDECREF(got);
    Py_XDECREF(v);
    return r;
}

/* A DIE's code range, from its plan's (low index, high index, ptx): invert called when the
 * cubin's ends before it begins in one function. 0, or -1 an error. */
static int range_in_order(PyObject *attrs_b, PyObject *pc, PyObject *i, PyObject *invert) {
    PyObject *lo = PySequence_GetItem(pc, 0), *hi = lo ? PySequence_GetItem(pc, 1) : NULL;
    PyObject *x_lo = hi ? item(attrs_b, lo) : NULL, *x_hi = x_lo ? item(attrs_b, hi) : NULL;
    PyObject *low = x_hi ? field(x_lo, attribute_class, attribute_relocs, s_relocs) : NULL;
    PyObject *high = low ? field(x_hi, attribute_class, attribute_relocs, s_relocs) : NULL;
    PyObject *begin = NULL, *end = NULL, *bn = NULL, *en = NULL, *ba = NULL, *ea = NULL, *ptx = NULL;
    int r = -1;
    if (!high) goto done;
    int both = PyObject_IsTrue(low);
    if (both > 0) both = PyObject_IsTrue(high);
    if (both <= 0) {
        r = both;
        goto done;
    }
    if (!(begin = first_symbol(low)) || !(end = first_symbol(high)) || !(bn = symbol_field(begin, 0)) ||
        !(en = symbol_field(end, 0)))
        goto done;
    int same = PyObject_RichCompareBool(bn, en, Py_EQ);
    if (same <= 0) {
        r = same;
        goto done;
    }
    if (!(ba = symbol_field(begin, 1)) || !(ea = symbol_field(end, 1))) goto done;
    int after = PyObject_RichCompareBool(ba, ea, Py_GT);
    if (after <= 0) {
        r = after;
        goto done;
    }
    if (!(ptx = PySequence_GetItem(pc, 2))) goto done;
    PyObject *args[4] = {i, ptx, begin, end};
    PyObject *out = PyObject_Vectorcall(invert, args, 4, NULL);
    if (!out) goto done;
    Py_DECREF(out);
    r = 0;
done:
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    Py_XDECREF(x_lo);
    Py_XDECREF(x_hi);
    Py_XDECREF(low);
    Py_XDECREF(high);
    Py_XDECREF(begin);
    Py_XDECREF(end);
    Py_XDECREF(bn);
    Py_XDECREF(en);
    Py_XDECREF(ba);
    Py_XDECREF(ea);
    Py_XDECREF(ptx);
    return r;
}

/* walk_by_sites(theirs, order, attributes, pcs, placed, local_counts, asize, differ, invert):
 * the symbols found, or None to leave the call to the reference (arguments of other types, or
 * a plan whose three lists differ in length), before anything is done. An error on the way
 * (in differ or invert, or one the reference meets at the same place) is raised, as the
 * reference raises it, after the same calls. */
static PyObject *walk_by_sites(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 9 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[2]) || !PyList_CheckExact(args[3]) ||
        !PyDict_CheckExact(args[4]) || !PyDict_CheckExact(args[5]) || !PyLong_CheckExact(args[6]) ||
        !PyCallable_Check(args[7]) || !PyCallable_Check(args[8]))
        Py_RETURN_NONE;
    if (load_model() < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *theirs = args[0], *attributes = args[2], *pcs = args[3], *placed = args[4], *local_counts = args[5];
    PyObject *asize = args[6], *differ = args[7], *invert = args[8];
    PyObject *order = PySequence_Fast(args[1], "order");
    if (!order) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(order);
    if (PyList_GET_SIZE(attributes) != n || PyList_GET_SIZE(pcs) != n) {
        Py_DECREF(order);
        Py_RETURN_NONE;
    }
    Py_ssize_t symbols = 0;
    PyObject *more = PyLong_FromLong(0), *result = NULL;
    if (!more) goto done;
    for (Py_ssize_t p = 0; p < n; p++) {
        PyObject *i = PySequence_Fast_GET_ITEM(order, p);
        PyObject *attrs = PyList_GET_ITEM(attributes, p), *pc = PyList_GET_ITEM(pcs, p);
        PyObject *die = item(theirs, i);
        PyObject *attrs_b = die ? field(die, die_class, die_attributes, s_attributes) : NULL;
        Py_XDECREF(die);
        if (!attrs_b) goto done;
        PyObject *iter = PyObject_GetIter(attrs), *planned;
        if (!iter) {
            Py_DECREF(attrs_b);
            goto done;
        }
        while ((planned = PyIter_Next(iter))) {
            PyObject *k = NULL, *function = NULL, *offset = NULL, *label = NULL, *local = NULL, *y = NULL;
            int r = -1;
            if (PyTuple_CheckExact(planned) && PyTuple_GET_SIZE(planned) == 5) {
                k = PyTuple_GET_ITEM(planned, 0);
                function = PyTuple_GET_ITEM(planned, 1);
                offset = PyTuple_GET_ITEM(planned, 2);
                label = PyTuple_GET_ITEM(planned, 3);
                local = PyTuple_GET_ITEM(planned, 4);
                if ((y = item(attrs_b, k)))
                    r = attribute_in_place(y, function, offset, label, local, placed, local_counts, asize, &symbols,
                                           &more);
                if (r == 0) {
                    PyObject *call[3] = {i, k, y};
                    PyObject *out = PyObject_Vectorcall(differ, call, 3, NULL);
                    r = out ? 1 : -1;
                    Py_XDECREF(out);
                }
            } else {
                PyErr_SetString(PyExc_ValueError, "a planned attribute is not a tuple of 5");
            }
            Py_XDECREF(y);
            Py_DECREF(planned);
            if (r < 0) break;
        }
        Py_DECREF(iter);
        if (PyErr_Occurred() || (pc != Py_None && range_in_order(attrs_b, pc, i, invert) < 0)) {
            Py_DECREF(attrs_b);
            goto done;
        }
        Py_DECREF(attrs_b);
    }
    PyObject *counted = PyLong_FromSsize_t(symbols);
    if (counted) {
        result = PyNumber_Add(more, counted);
        Py_DECREF(counted);
    }
done:
    Py_DECREF(order);
    Py_XDECREF(more);
    return result;
}

static PyMethodDef methods[] = {
    {"labels_apart", (PyCFunction)(void (*)(void))labels_apart, METH_FASTCALL,
     "The twin of ptxdwarf.check.lines.labels_apart."},
    {"placed_entries", (PyCFunction)(void (*)(void))placed_entries, METH_FASTCALL,
     "The twin of ptxdwarf.check.sections.placed_entries."},
    {"walk_by_sites", (PyCFunction)(void (*)(void))walk_by_sites, METH_FASTCALL,
     "The twin of ptxdwarf.check.walk.walk_by_sites."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "compare", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_compare(void) { return PyModule_Create(&module); }
