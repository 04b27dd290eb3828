/* The join of a cubin's variables with ptxas's register map: the twin of
 * ptxdwarf.visibility._join, walking the model's own objects (DIE, Attribute, Block, Symbol,
 * which setup() hands over once with RegisterLocation and three helpers of the reference).
 * A DIE or attribute of another shape (an indirect form, a slot left unset, attributes or
 * children that are not lists, a location list entry that is not a triple, a tree deeper
 * than the reference's recursion takes) gives None, and the reference runs. */
#include "common.h"

enum {
    TAG_FORMAL_PARAMETER = 0x05,
    TAG_LEXICAL_BLOCK = 0x0b,
    TAG_INLINED_SUBROUTINE = 0x1d,
    TAG_SUBPROGRAM = 0x2e,
    TAG_VARIABLE = 0x34,
    AT_LOCATION = 0x02,
    AT_NAME = 0x03,
    AT_LOW_PC = 0x11,
    AT_HIGH_PC = 0x12,
    AT_LINKAGE_NAME = 0x6e,
    AT_MIPS_LINKAGE_NAME = 0x2007,
    FORM_ADDR = 0x01,
    MAX_DEPTH = 400, /* the deepest path built here; deeper ones are the reference's */
};

/* The model's classes, their slots, and the reference's helpers. */
static struct {
    PyTypeObject *die, *attribute, *block, *symbol, *location;
    Py_ssize_t die_tag, die_parent, die_children, die_attributes;
    Py_ssize_t a_name, a_form, a_value, a_relocs;
    symbol_fields sym;
    Py_ssize_t l_path, l_function, l_register, l_low, l_high, l_mapped, l_pieces, l_entries, l_ranges;
    PyObject *registers, *path_part, *no_map;
} J;

static PyObject *s_units, *s_address_size, *s_die, *s_function, *s_entries, *s_location_list_at,
    *s_register_ranges;


/* Results of the helpers: OK, DECLINED (the reference runs), FAILED (an exception is set). */
enum { OK = 0, DECLINED = 1, FAILED = -1 };

static PyObject *setup(PyObject *self, PyObject *args) {
    PyTypeObject *t[5];
    PyObject *registers, *path_part, *no_map;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OOO:setup", &PyType_Type, &t[0], &PyType_Type, &t[1], &PyType_Type,
                          &t[2], &PyType_Type, &t[3], &PyType_Type, &t[4], &registers, &path_part, &no_map))
        return NULL;
    if (!PyType_IsSubtype(t[2], &PyBytes_Type)) {
        PyErr_SetString(PyExc_TypeError, "Block must be bytes");
        return NULL;
    }
    if (slot_offset(t[0], "tag", &J.die_tag) || slot_offset(t[0], "parent", &J.die_parent) ||
        slot_offset(t[0], "children", &J.die_children) || slot_offset(t[0], "attributes", &J.die_attributes) ||
        slot_offset(t[1], "name", &J.a_name) || slot_offset(t[1], "form", &J.a_form) ||
        slot_offset(t[1], "value", &J.a_value) || slot_offset(t[1], "relocs", &J.a_relocs) ||
        symbol_fields_of(t[3], &J.sym) < 0 || slot_offset(t[4], "path", &J.l_path) ||
        slot_offset(t[4], "function", &J.l_function) || slot_offset(t[4], "register", &J.l_register) ||
        slot_offset(t[4], "low_pc", &J.l_low) || slot_offset(t[4], "high_pc", &J.l_high) ||
        slot_offset(t[4], "mapped", &J.l_mapped) || slot_offset(t[4], "pieces", &J.l_pieces) ||
        slot_offset(t[4], "_entries", &J.l_entries) || slot_offset(t[4], "_ranges", &J.l_ranges))
        return NULL;
    PyTypeObject **keep[5] = {&J.die, &J.attribute, &J.block, &J.symbol, &J.location};
    for (int i = 0; i < 5; i++) Py_XSETREF(*keep[i], (PyTypeObject *)Py_NewRef(t[i]));
    Py_XSETREF(J.registers, Py_NewRef(registers));
    Py_XSETREF(J.path_part, Py_NewRef(path_part));
    Py_XSETREF(J.no_map, Py_NewRef(no_map));
    Py_RETURN_NONE;
}

static int is_symbol(PyObject *o) { return PyObject_TypeCheck(o, J.symbol); }

/* The attribute ``code`` of ``die`` (borrowed; NULL when it has none): DIE.attr. */
static int find_attr(PyObject *die, long code, PyObject **out) {
    *out = NULL;
    PyObject *attrs = SLOT(die, J.die_attributes);
    if (!attrs || !PyList_CheckExact(attrs)) return DECLINED;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(attrs); i++) {
        PyObject *a = PyList_GET_ITEM(attrs, i);
        if (!Py_IS_TYPE(a, J.attribute)) return DECLINED;
        PyObject *name = SLOT(a, J.a_name);
        if (!name || !PyLong_Check(name) || !SLOT(a, J.a_value) || !SLOT(a, J.a_relocs) || !SLOT(a, J.a_form))
            return DECLINED;
        int overflow;
        long n = PyLong_AsLongAndOverflow(name, &overflow);
        if (n == -1 && !overflow && PyErr_Occurred()) return FAILED;
        if (!overflow && n == code) {
            *out = a;
            return OK;
        }
    }
    return OK;
}

/* The value of attribute ``code`` (borrowed; NULL when the DIE has none): DIE.get, declining
 * a DW_FORM_indirect one. */
static int get_value(PyObject *die, long code, PyObject **out) {
    PyObject *a;
    int r = find_attr(die, code, &a);
    *out = NULL;
    if (r != OK || !a) return r;
    PyObject *value = SLOT(a, J.a_value);
    if (PyObject_TypeCheck(value, J.attribute)) return DECLINED;
    *out = value;
    return OK;
}

/* Attribute.symbol (borrowed; NULL for none). */
static int attr_symbol(PyObject *a, PyObject **out) {
    *out = NULL;
    PyObject *relocs = SLOT(a, J.a_relocs);
    if (!PyTuple_Check(relocs)) return DECLINED;
    if (PyTuple_GET_SIZE(relocs) == 0) return OK;
    PyObject *first = PyTuple_GET_ITEM(relocs, 0);
    if (!PyTuple_Check(first) || PyTuple_GET_SIZE(first) < 3 || !PyLong_Check(PyTuple_GET_ITEM(first, 0)))
        return DECLINED;
    int overflow;
    long offset = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(first, 0), &overflow);
    if (offset == -1 && !overflow && PyErr_Occurred()) return FAILED;
    if (overflow || offset != 0 || PyObject_TypeCheck(SLOT(a, J.a_value), J.block)) return OK;
    *out = PyTuple_GET_ITEM(first, 2);
    return OK;
}

/* ``attr.symbol or attr.value`` (borrowed). */
static int pc_of(PyObject *a, PyObject **out) {
    PyObject *symbol;
    int r = attr_symbol(a, &symbol);
    if (r != OK) return r;
    if (symbol) {
        int truth = PyObject_IsTrue(symbol);
        if (truth < 0) return FAILED;
        if (truth) {
            *out = symbol;
            return OK;
        }
    }
    *out = SLOT(a, J.a_value);
    return OK;
}

/* visibility._offset: a new reference, Py_None for None. */
static int offset_in(PyObject *value, PyObject *function, PyObject **out) {
    if (is_symbol(value)) {
        PyObject *name = SLOT(value, J.sym.name), *addend = SLOT(value, J.sym.addend);
        if (!name || !addend) return DECLINED;
        int differs = PyObject_RichCompareBool(name, function, Py_NE);
        if (differs < 0) return FAILED;
        *out = Py_NewRef(differs ? Py_None : addend);
        return OK;
    }
    *out = Py_NewRef(PyLong_Check(value) ? value : Py_None);
    return OK;
}

/* visibility._bound. */
static int bound_of(PyObject *value, PyObject *other, PyObject *function, PyObject **out) {
    if (is_symbol(other) && !is_symbol(value)) {
        *out = Py_NewRef(Py_None);
        return OK;
    }
    return offset_in(value, function, out);
}

/* visibility._range: new references, Py_None for None. */
static int range_of(PyObject *die, PyObject *function, PyObject **low, PyObject **high) {
    PyObject *high_attr, *low_attr, *low_pc = Py_None, *high_pc, *high_symbol;
    *low = *high = NULL;
    int r = find_attr(die, AT_HIGH_PC, &high_attr);
    if (r != OK) return r;
    if (!high_attr) goto none;
    if ((r = find_attr(die, AT_LOW_PC, &low_attr)) != OK) return r;
    if (low_attr && (r = pc_of(low_attr, &low_pc)) != OK) return r;
    if ((r = pc_of(high_attr, &high_pc)) != OK) return r;
    if ((r = bound_of(low_pc, high_pc, function, low)) != OK) return r;
    if (*low == Py_None) {
        Py_CLEAR(*low);
        goto none;
    }
    if ((r = bound_of(high_pc, low_pc, function, high)) != OK) goto failed;
    if ((r = attr_symbol(high_attr, &high_symbol)) != OK) goto failed;
    PyObject *value = SLOT(high_attr, J.a_value), *form = SLOT(high_attr, J.a_form);
    if (!high_symbol && PyLong_Check(value)) {
        int not_addr = 1;
        if (PyLong_Check(form)) {
            int overflow;
            long f = PyLong_AsLongAndOverflow(form, &overflow);
            if (f == -1 && !overflow && PyErr_Occurred()) goto error;
            not_addr = overflow || f != FORM_ADDR;
        } else if (form != Py_None) {
            r = DECLINED;
            goto failed;
        }
        if (not_addr) { /* DWARF 4's constant class: the length of the range */
            PyObject *sum = PyNumber_Add(*low, value);
            if (!sum) goto error;
            Py_SETREF(*high, sum);
        }
    }
    return OK;
none:
    *low = Py_NewRef(Py_None);
    *high = Py_NewRef(Py_None);
    return OK;
error:
    r = FAILED;
failed:
    Py_CLEAR(*low);
    Py_CLEAR(*high);
    return r;
}

/* visibility._function_name: a new reference, Py_None for None. */
static int function_name(PyObject *sub, PyObject **out) {
    PyObject *low_attr, *symbol = NULL, *name = NULL;
    int r = find_attr(sub, AT_LOW_PC, &low_attr);
    if (r != OK) return r;
    if (low_attr && (r = attr_symbol(low_attr, &symbol)) != OK) return r;
    if (symbol) {
        if (!is_symbol(symbol) || !SLOT(symbol, J.sym.name)) return DECLINED;
        *out = Py_NewRef(SLOT(symbol, J.sym.name));
        return OK;
    }
    const long codes[3] = {AT_LINKAGE_NAME, AT_MIPS_LINKAGE_NAME, AT_NAME};
    for (int i = 0; i < 3; i++) {
        PyObject *value;
        if ((r = get_value(sub, codes[i], &value)) != OK) return r;
        if (!value || (i == 2 && !PyUnicode_Check(value))) continue;
        int truth = PyObject_IsTrue(value);
        if (truth < 0) return FAILED;
        if (truth) {
            name = value;
            break;
        }
    }
    if (!name) {
        *out = Py_NewRef(Py_None);
        return OK;
    }
    return (*out = PyObject_Str(name)) ? OK : FAILED;
}

/* One path part (model._path_part): the reference's for a DIE named by neither. */
static int path_part(PyObject *die, long tag, PyObject **out) {
    PyObject *name = NULL, *value;
    int r;
    if (tag == TAG_SUBPROGRAM) {
        for (int i = 0; i < 2 && !name; i++) {
            if ((r = get_value(die, i ? AT_MIPS_LINKAGE_NAME : AT_LINKAGE_NAME, &value)) != OK) return r;
            if (value) {
                int truth = PyObject_IsTrue(value);
                if (truth < 0) return FAILED;
                if (truth) name = value;
            }
        }
    }
    if (!name) {
        if ((r = get_value(die, AT_NAME, &value)) != OK) return r;
        if (value && PyUnicode_Check(value) && PyUnicode_GET_LENGTH(value) > 0) name = value;
    }
    if (!name) return (*out = PyObject_CallOneArg(J.path_part, die)) ? OK : FAILED;
    return (*out = PyObject_Str(name)) ? OK : FAILED;
}

static long tag_of(PyObject *die, int *ok) {
    PyObject *tag = SLOT(die, J.die_tag);
    *ok = 0;
    if (!tag || !PyLong_Check(tag)) return 0;
    int overflow;
    long t = PyLong_AsLongAndOverflow(tag, &overflow);
    if (t == -1 && !overflow && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *ok = 1;
    return overflow ? -1 : t;
}

typedef struct {
    PyObject *info, *maps, *result, *asked, *expressions, *paths, *address_size;
} join;

/* _Join.path (a new reference). */
static int path_of(join *j, PyObject *die, int depth, PyObject **out) {
    int ok;
    long tag = tag_of(die, &ok);
    PyObject *parent = SLOT(die, J.die_parent);
    if (!ok || !parent || parent == Py_None || !Py_IS_TYPE(parent, J.die) || depth > MAX_DEPTH) return DECLINED;
    PyObject *grandparent = SLOT(parent, J.die_parent);
    if (!grandparent) return DECLINED;
    if (grandparent == Py_None) return path_part(die, tag, out);
    PyObject *parent_path = PyDict_GetItemWithError(j->paths, parent);
    int r;
    if (parent_path) {
        Py_INCREF(parent_path);
    } else {
        if (PyErr_Occurred()) return FAILED;
        if ((r = path_of(j, parent, depth + 1, &parent_path)) != OK) return r;
        if (PyDict_SetItem(j->paths, parent, parent_path) < 0) {
            Py_DECREF(parent_path);
            return FAILED;
        }
    }
    PyObject *part;
    if ((r = path_part(die, tag, &part)) != OK) {
        Py_DECREF(parent_path);
        return r;
    }
    if (!PyUnicode_Check(parent_path) || !PyUnicode_Check(part)) {
        Py_DECREF(parent_path);
        Py_DECREF(part);
        return DECLINED;
    }
    if (PyUnicode_GET_LENGTH(parent_path) == 0) {
        Py_DECREF(parent_path);
        *out = part;
        return OK;
    }
    *out = PyUnicode_FromFormat("%U/%U", parent_path, part);
    Py_DECREF(parent_path);
    Py_DECREF(part);
    return *out ? OK : FAILED;
}

/* _Join.registers (borrowed from the cache): a tuple of register names. */
static int registers_of(join *j, PyObject *expr, PyObject **out) {
    if (!PyBytes_Check(expr)) return DECLINED;
    PyObject *key = PyBytes_CheckExact(expr) ? Py_NewRef(expr)
                                              : PyBytes_FromStringAndSize(PyBytes_AS_STRING(expr), PyBytes_GET_SIZE(expr));
    if (!key) return FAILED;
    PyObject *found = PyDict_GetItemWithError(j->expressions, key);
    if (!found) {
        if (PyErr_Occurred() || !(found = PyObject_CallFunctionObjArgs(J.registers, expr, j->address_size, NULL))) {
            Py_DECREF(key);
            return FAILED;
        }
        int r = PyTuple_CheckExact(found) ? PyDict_SetItem(j->expressions, key, found) : 1;
        Py_DECREF(found); /* the cache holds it */
        if (r) {
            Py_DECREF(key);
            return r < 0 ? FAILED : DECLINED;
        }
    }
    Py_DECREF(key);
    *out = found;
    return OK;
}

/* One RegisterLocation of ``die`` (its path made once, in ``*path``). */
static int add_location(join *j, PyObject *die, PyObject **path, PyObject *reg, PyObject *low, PyObject *high,
                        PyObject *function) {
    int r;
    if (!*path && (r = path_of(j, die, 0, path)) != OK) return r;
    if (!PyUnicode_Check(function)) return DECLINED;
    PyObject *loc = J.location->tp_alloc(J.location, 0);
    if (!loc) return FAILED;
    SLOT(loc, J.l_path) = Py_NewRef(*path);
    SLOT(loc, J.l_function) = Py_NewRef(function);
    SLOT(loc, J.l_register) = Py_NewRef(reg);
    SLOT(loc, J.l_low) = Py_NewRef(low);
    SLOT(loc, J.l_high) = Py_NewRef(high);
    r = PyList_Append(j->result, loc);
    Py_DECREF(loc);
    if (r < 0) return FAILED;
    PyObject *asked = PyDict_GetItemWithError(j->asked, function);
    if (!asked) {
        if (PyErr_Occurred() || !(asked = PySet_New(NULL))) return FAILED;
        r = PyDict_SetItem(j->asked, function, asked);
        Py_DECREF(asked);
        if (r < 0) return FAILED;
    }
    return PySet_Add(asked, reg) < 0 ? FAILED : OK;
}

/* visibility._function_of_entry (borrowed). */
static int function_of_entry(join *j, PyObject *begin, PyObject *function, PyObject **out) {
    *out = function;
    if (!is_symbol(begin)) return OK;
    PyObject *name = SLOT(begin, J.sym.name);
    if (!name) return DECLINED;
    int same = PyObject_RichCompareBool(name, function, Py_EQ);
    if (same < 0) return FAILED;
    if (!same && (same = PyDict_Contains(j->maps, name)) < 0) return FAILED;
    if (same) *out = name;
    return OK;
}

/* The register locations of one variable or parameter in ``scope`` (function, low, high). */
static int variable(join *j, PyObject *die, PyObject *scope) {
    PyObject *attr, *path = NULL, *registers;
    int r = find_attr(die, AT_LOCATION, &attr);
    if (r != OK || !attr) return r;
    PyObject *function = PyTuple_GET_ITEM(scope, 0), *value = SLOT(attr, J.a_value);
    if (PyObject_TypeCheck(value, J.block)) {
        if ((r = registers_of(j, value, &registers)) != OK) return r;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(registers) && r == OK; i++)
            r = add_location(j, die, &path, PyTuple_GET_ITEM(registers, i), PyTuple_GET_ITEM(scope, 1),
                             PyTuple_GET_ITEM(scope, 2), function);
        Py_XDECREF(path);
        return r;
    }
    if (!PyLong_Check(value)) return OK;
    PyObject *list = PyObject_CallMethodOneArg(j->info, s_location_list_at, value);
    if (!list) return FAILED;
    PyObject *entries = list == Py_None ? NULL : PyObject_GetAttr(list, s_entries);
    Py_DECREF(list);
    if (!entries) return PyErr_Occurred() ? FAILED : OK;
    if (!PyList_Check(entries)) {
        Py_DECREF(entries);
        return DECLINED;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries) && r == OK; i++) {
        PyObject *entry = PyList_GET_ITEM(entries, i), *in_function, *low = NULL, *high = NULL;
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3) {
            r = DECLINED;
            break;
        }
        PyObject *begin = PyTuple_GET_ITEM(entry, 0), *end = PyTuple_GET_ITEM(entry, 1),
                 *expr = PyTuple_GET_ITEM(entry, 2);
        if (expr == Py_None) continue;
        if ((r = registers_of(j, expr, &registers)) != OK) break;
        if (PyTuple_GET_SIZE(registers) == 0) continue;
        if ((r = function_of_entry(j, begin, function, &in_function)) != OK) break;
        Py_INCREF(in_function);
        if ((r = bound_of(begin, end, in_function, &low)) == OK && (r = bound_of(end, begin, in_function, &high)) == OK)
            for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(registers) && r == OK; k++)
                r = add_location(j, die, &path, PyTuple_GET_ITEM(registers, k), low, high, in_function);
        Py_XDECREF(low);
        Py_XDECREF(high);
        Py_DECREF(in_function);
    }
    Py_DECREF(entries);
    Py_XDECREF(path);
    return r;
}

/* visibility._inner_scope: *scope and *function (owned, NULL for None) replaced. */
static int inner_scope(PyObject *die, long tag, PyObject **scope, PyObject **function) {
    PyObject *low, *high;
    int r;
    if (tag == TAG_SUBPROGRAM) {
        PyObject *name;
        if ((r = function_name(die, &name)) != OK) return r;
        Py_CLEAR(*scope);
        Py_CLEAR(*function);
        if (name == Py_None) {
            Py_DECREF(name);
            return OK;
        }
        if ((r = range_of(die, name, &low, &high)) != OK) {
            Py_DECREF(name);
            return r;
        }
        *scope = PyTuple_Pack(3, name, low, high);
        Py_DECREF(low);
        Py_DECREF(high);
        *function = name;
        return *scope ? OK : FAILED;
    }
    if (!*function) return OK;
    if ((r = range_of(die, *function, &low, &high)) != OK) return r;
    if (low != Py_None) {
        PyObject *inner = PyTuple_Pack(3, *function, low, high);
        if (!inner) r = FAILED;
        else Py_XSETREF(*scope, inner);
    }
    Py_DECREF(low);
    Py_DECREF(high);
    return r;
}

typedef struct {
    PyObject *die, *scope, *function; /* owned; scope and function NULL for None */
} frame;

static void frames_clear(frame *f, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_XDECREF(f[i].die);
        Py_XDECREF(f[i].scope);
        Py_XDECREF(f[i].function);
    }
}

/* visibility._variables_in_scope over one unit's tree, each variable joined. */
static int walk(join *j, PyObject *root) {
    Py_ssize_t n = 0, cap = 64;
    frame *stack = PyMem_Malloc(cap * sizeof(frame));
    if (!stack) {
        PyErr_NoMemory();
        return FAILED;
    }
    stack[n++] = (frame){Py_NewRef(root), NULL, NULL};
    int r = OK;
    while (n > 0 && r == OK) {
        frame f = stack[--n];
        int ok;
        long tag = Py_IS_TYPE(f.die, J.die) ? tag_of(f.die, &ok) : (ok = 0);
        PyObject *children = ok ? SLOT(f.die, J.die_children) : NULL;
        if (!children || !PyList_CheckExact(children)) r = DECLINED;
        if (r == OK && (tag == TAG_VARIABLE || tag == TAG_FORMAL_PARAMETER) && f.scope) r = variable(j, f.die, f.scope);
        if (r == OK && PyList_GET_SIZE(children) > 0) {
            if (tag == TAG_SUBPROGRAM || tag == TAG_LEXICAL_BLOCK || tag == TAG_INLINED_SUBROUTINE) {
                PyObject *low;
                if ((r = find_attr(f.die, AT_LOW_PC, &low)) == OK && low)
                    r = inner_scope(f.die, tag, &f.scope, &f.function);
            }
            Py_ssize_t count = PyList_GET_SIZE(children);
            if (r == OK && n + count > cap) {
                Py_ssize_t want = (n + count) * 2;
                frame *grown = PyMem_Realloc(stack, want * sizeof(frame));
                if (!grown) {
                    PyErr_NoMemory();
                    r = FAILED;
                } else {
                    stack = grown;
                    cap = want;
                }
            }
            for (Py_ssize_t i = count - 1; r == OK && i >= 0; i--)
                stack[n++] = (frame){Py_NewRef(PyList_GET_ITEM(children, i)), Py_XNewRef(f.scope), Py_XNewRef(f.function)};
        }
        frames_clear(&f, 1);
    }
    frames_clear(stack, n);
    PyMem_Free(stack);
    return r;
}

/* The map entries of each location, asked of each function's map once. */
static int fill(join *j) {
    PyObject *found = PyDict_New(), *function, *registers;
    if (!found) return FAILED;
    Py_ssize_t pos = 0;
    int r = OK;
    while (r == OK && PyDict_Next(j->asked, &pos, &function, &registers)) {
        PyObject *fmap = PyDict_GetItemWithError(j->maps, function);
        if (!fmap && PyErr_Occurred()) {
            r = FAILED;
            break;
        }
        int truth = fmap ? PyObject_IsTrue(fmap) : 0;
        if (truth < 0) {
            r = FAILED;
            break;
        }
        if (!truth) fmap = J.no_map;
        PyObject *ranges = PyObject_CallMethodOneArg(fmap, s_register_ranges, registers);
        PyObject *pair = ranges && PyDict_Check(ranges) ? PyTuple_Pack(2, fmap, ranges) : NULL;
        if (!pair) r = ranges && !PyDict_Check(ranges) ? DECLINED : FAILED;
        else if (PyDict_SetItem(found, function, pair) < 0) r = FAILED;
        Py_XDECREF(ranges);
        Py_XDECREF(pair);
    }
    for (Py_ssize_t i = 0; r == OK && i < PyList_GET_SIZE(j->result); i++) {
        PyObject *loc = PyList_GET_ITEM(j->result, i);
        PyObject *pair = PyDict_GetItemWithError(found, SLOT(loc, J.l_function));
        PyObject *entry = pair ? PyDict_GetItemWithError(PyTuple_GET_ITEM(pair, 1), SLOT(loc, J.l_register)) : NULL;
        if (!entry) {
            r = PyErr_Occurred() ? FAILED : DECLINED;
            break;
        }
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
            r = DECLINED;
            break;
        }
        PyObject *pieces = PyTuple_GET_ITEM(entry, 1);
        int mapped = PyObject_IsTrue(pieces);
        PyObject *ranges = mapped < 0 ? NULL : PyTuple_Pack(2, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(entry, 0));
        if (!ranges) {
            r = FAILED;
            break;
        }
        Py_XSETREF(SLOT(loc, J.l_mapped), Py_NewRef(mapped ? Py_True : Py_False));
        Py_XSETREF(SLOT(loc, J.l_pieces), Py_NewRef(pieces));
        Py_XSETREF(SLOT(loc, J.l_entries), Py_NewRef(Py_None));
        Py_XSETREF(SLOT(loc, J.l_ranges), ranges);
    }
    Py_DECREF(found);
    return r;
}

/* _join(info, functions): the twin of ptxdwarf.visibility._join, or None. */
static PyObject *_join(PyObject *self, PyObject *args) {
    PyObject *info, *functions;
    if (!PyArg_ParseTuple(args, "OO!:_join", &info, &PyList_Type, &functions)) return NULL;
    if (!J.location) Py_RETURN_NONE;
    join j = {info, PyDict_New(), PyList_New(0), PyDict_New(), PyDict_New(), PyDict_New(), NULL};
    PyObject *units = NULL, *result = NULL;
    int r = FAILED;
    if (!j.maps || !j.result || !j.asked || !j.expressions || !j.paths) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(functions); i++) {
        PyObject *f = PyList_GET_ITEM(functions, i), *name = PyObject_GetAttr(f, s_function);
        int set = name ? PyDict_SetItem(j.maps, name, f) : -1;
        Py_XDECREF(name);
        if (set < 0) goto done;
    }
    if (!(units = PyObject_GetAttr(info, s_units))) goto done;
    r = DECLINED;
    if (!PyList_CheckExact(units)) goto done;
    r = FAILED;
    j.address_size = PyList_GET_SIZE(units) ? PyObject_GetAttr(PyList_GET_ITEM(units, 0), s_address_size)
                                            : PyLong_FromLong(8);
    if (!j.address_size) goto done;
    r = OK;
    for (Py_ssize_t i = 0; r == OK && i < PyList_GET_SIZE(units); i++) {
        PyObject *root = PyObject_GetAttr(PyList_GET_ITEM(units, i), s_die);
        if (!root) {
            r = FAILED;
            break;
        }
        if (root != Py_None) r = walk(&j, root);
        Py_DECREF(root);
    }
    if (r == OK) r = fill(&j);
done:
    if (r == OK) result = Py_NewRef(j.result);
    else if (r == DECLINED) result = Py_NewRef(Py_None);
    Py_XDECREF(units);
    Py_XDECREF(j.maps);
    Py_XDECREF(j.result);
    Py_XDECREF(j.asked);
    Py_XDECREF(j.expressions);
    Py_XDECREF(j.paths);
    Py_XDECREF(j.address_size);
    return result;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(DIE, Attribute, Block, Symbol, RegisterLocation, registers, path_part, no_map): the classes and "
     "helpers of the reference."},
    {"_join", _join, METH_VARARGS, "_join(info, functions): the register locations of info's variables, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "visibility",
                                    .m_doc = "The join of a cubin's variables with ptxas's register map.",
                                    .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit_visibility(void) {
    struct { PyObject **name; const char *text; } names[] = {
        {&s_units, "units"}, {&s_address_size, "address_size"}, {&s_die, "die"}, {&s_function, "function"},
        {&s_entries, "entries"}, {&s_location_list_at, "location_list_at"}, {&s_register_ranges, "register_ranges"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].name && !(*names[i].name = PyUnicode_InternFromString(names[i].text))) return NULL;
    return PyModule_Create(&module);
}
