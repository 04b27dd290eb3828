/* The text dump's DIE printer, the twin of ptxdwarf.dump._die_lines, its .debug_loc block
 * (ptxdwarf.dump._loc_lines) and its expressions (ptxdwarf.dump._decoded_text). It writes the common values
 * itself (numbers, strings of printable ASCII, references, blocks, expressions, location lists)
 * and asks the printer's value_text for every other (an indirect form, a named value, a value of
 * another type), so that where it asks, what it shows is the reference's by construction. An item
 * of the stack it does not take (not a DIE of the model's own class, a depth that is not an int)
 * ends the chunk before it is taken, and the reference prints it in the next call. */
#include "common.h"
#include <structmember.h>

enum { F_DATA4 = 0x06, F_STRING = 0x08, F_SDATA = 0x0d, F_STRP = 0x0e, F_REF_ADDR = 0x10,
       F_REF_UDATA = 0x15, F_SEC_OFFSET = 0x17, F_EXPRLOC = 0x18, F_FLAG_PRESENT = 0x19 };
enum { AT_LOCATION = 0x02, AT_CONTAINING_TYPE = 0x1d, AT_FRAME_BASE = 0x40, AT_TYPE = 0x49 };
enum { MAX_INDENT = 40 };

/* The model's classes, where their slots live, the attribute sets of the reference. */
static struct {
    PyTypeObject *die, *attribute, *block, *symbol, *reloc;
    Py_ssize_t die_tag, die_offset, die_attributes, die_children, die_has_children;
    Py_ssize_t a_name, a_form, a_value, a_relocs, a_target;
    Py_ssize_t s_name, s_addend, s_value;
    PyObject *expression_attributes, *named_values;
    int ready;
} M;

static PyObject *s_info, *s_tags, *s_ats, *s_forms, *s_references, *s_values, *s_expressions, *s_value_text,
    *s_expression_text, *s_tag_text, *s_at_text, *s_form_text, *s_location_list_at, *s_entries, *s_relocs, *s_offset,
    *s_empty, *s_x, *s_08x;

/* The classes and sets, once (the modules are loaded by the time a dump runs). */
static int load(void) {
    if (M.ready) return 0;
    M.die = imported_type("ptxdwarf.dwarf.model", "DIE");
    M.attribute = imported_type("ptxdwarf.dwarf.model", "Attribute");
    M.block = imported_type("ptxdwarf.dwarf.image", "Block");
    M.symbol = imported_type("ptxdwarf.dwarf.image", "Symbol");
    M.reloc = imported_type("ptxdwarf.dwarf.image", "Reloc");
    M.expression_attributes = imported("ptxdwarf.dwarf.constants", "EXPRESSION_ATTRIBUTES");
    M.named_values = imported("ptxdwarf.dump", "_NAMED_VALUES");
    if (!M.die || !M.attribute || !M.block || !M.symbol || !M.reloc || !M.expression_attributes ||
        !M.named_values)
        return -1;
    if (!PyAnySet_Check(M.expression_attributes) || !PyAnySet_Check(M.named_values) ||
        !PyType_IsSubtype(M.block, &PyBytes_Type) || !PyType_IsSubtype(M.reloc, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "the model is not what the dump kernel was built for");
        return -1;
    }
    if (slot_offset(M.die, "tag", &M.die_tag) || slot_offset(M.die, "offset", &M.die_offset) ||
        slot_offset(M.die, "attributes", &M.die_attributes) || slot_offset(M.die, "children", &M.die_children) ||
        slot_offset(M.die, "has_children", &M.die_has_children) ||
        slot_offset(M.attribute, "name", &M.a_name) || slot_offset(M.attribute, "form", &M.a_form) ||
        slot_offset(M.attribute, "value", &M.a_value) || slot_offset(M.attribute, "relocs", &M.a_relocs) ||
        slot_offset(M.attribute, "target", &M.a_target) || slot_offset(M.symbol, "name", &M.s_name) ||
        slot_offset(M.symbol, "addend", &M.s_addend) || slot_offset(M.symbol, "value", &M.s_value))
        return -1;
    M.ready = 1;
    return 0;
}

/* ------------------------------------------------------------------ lines */

/* The lines being made, each ended by a newline: UTF-8 bytes (a piece that is not ASCII is
 * written with surrogatepass, so that the lines come back as the same code points). */
typedef struct {
    buffer b;
    int ascii;
    Py_ssize_t lines;
} line;

static int put(line *l, const char *s, size_t n) { return buffer_put(&l->b, s, n); }

static int puts_(line *l, const char *s) { return put(l, s, strlen(s)); }

static int put_str(line *l, PyObject *s) {
    if (PyUnicode_IS_ASCII(s)) return put(l, (const char *)PyUnicode_1BYTE_DATA(s), (size_t)PyUnicode_GET_LENGTH(s));
    PyObject *bytes = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
    if (!bytes) return -1;
    l->ascii = 0;
    int r = put(l, PyBytes_AS_STRING(bytes), (size_t)PyBytes_GET_SIZE(bytes));
    Py_DECREF(bytes);
    return r;
}

/* ``{obj}`` of an f-string. */
static int put_obj(line *l, PyObject *obj) {
    if (PyUnicode_CheckExact(obj)) return put_str(l, obj);
    PyObject *s = PyObject_Format(obj, s_empty);
    if (!s) return -1;
    int r = put_str(l, s);
    Py_DECREF(s);
    return r;
}

/* ``f"{obj:spec}"``. */
static int put_format(line *l, PyObject *obj, PyObject *spec) {
    PyObject *s = PyObject_Format(obj, spec);
    if (!s) return -1;
    int r = put_str(l, s);
    Py_DECREF(s);
    return r;
}

/* The hex digits of u, at least width of them. */
static int put_hex_u64(line *l, unsigned long long u, int width) {
    char tmp[16];
    int k = 0;
    do {
        tmp[15 - k++] = "0123456789abcdef"[u & 15];
        u >>= 4;
    } while (u);
    while (k < width) tmp[15 - k++] = '0';
    return put(l, tmp + 16 - k, (size_t)k);
}

/* ``f"{v:x}"`` of an int (``width`` 8: ``08x``). */
static int put_hex(line *l, PyObject *v, int width) {
    unsigned long long u = PyLong_AsUnsignedLongLong(v);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return put_format(l, v, width == 8 ? s_08x : s_x);
    }
    return put_hex_u64(l, u, width);
}

/* A sign and the decimal digits of n. */
static int put_signed(line *l, char sign, unsigned long long n) {
    char tmp[24];
    int k = 0;
    do {
        tmp[23 - k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    tmp[23 - k++] = sign;
    return put(l, tmp + 24 - k, (size_t)k);
}

/* (how many lines, their text, each ended by a newline): what the kernels give. */
static PyObject *lines_made(line *l) {
    Py_ssize_t n = (Py_ssize_t)l->b.len;
    PyObject *s;
    if (!l->ascii) s = PyUnicode_DecodeUTF8((const char *)l->b.data, n, "surrogatepass");
    else {
        s = PyUnicode_New(n, 127);
        if (s && n) memcpy(PyUnicode_1BYTE_DATA(s), l->b.data, (size_t)n);
    }
    return s ? Py_BuildValue("(nN)", l->lines, s) : NULL;
}

static int emit(line *l) {
    l->lines++;
    return put(l, "\n", 1);
}

/* ------------------------------------------------------------------ values */

typedef struct {
    PyObject *printer, *info, *tags, *ats, *forms, *references, *values, *expressions;
} ctx;

enum { DONE = 0, FAILED = -1, ASK = 1 }; /* ASK: the printer's value_text says it */

/* A code of an int slot, an int or an IntEnum's member (-1: None; -2: something else). */
static long code_of(PyObject *v) {
    if (v == Py_None) return -1;
    if (!PyLong_Check(v)) return -2;
    long c = PyLong_AsLong(v);
    if (c == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return -2;
    }
    return c < 0 ? -2 : c;
}

/* The name of a code through the printer's dict, asking ``method`` where it has none. */
static PyObject *name_of(ctx *c, PyObject *cache, PyObject *method, PyObject *code) {
    PyObject *v = PyDict_GetItemWithError(cache, code);
    if (v) return Py_NewRef(v);
    if (PyErr_Occurred()) return NULL;
    return PyObject_CallMethodOneArg(c->printer, method, code);
}

/* ``str(symbol)`` (Symbol.__str__). */
static int put_symbol(line *l, PyObject *sym) {
    if (Py_IS_TYPE(sym, M.symbol)) {
        PyObject *name = SLOT(sym, M.s_name), *addend = SLOT(sym, M.s_addend);
        if (name && addend && PyUnicode_CheckExact(name) && PyLong_CheckExact(addend)) {
            int overflow;
            long long a = PyLong_AsLongLongAndOverflow(addend, &overflow);
            if (!overflow && a != LLONG_MIN && !(a == -1 && PyErr_Occurred())) {
                if (put_str(l, name) < 0) return -1;
                if (a == 0) return 0;
                return put_signed(l, a > 0 ? '+' : '-', a > 0 ? (unsigned long long)a : (unsigned long long)-a);
            }
            PyErr_Clear();
        }
    }
    PyObject *s = PyObject_Str(sym);
    if (!s) return -1;
    int r = put_str(l, s);
    Py_DECREF(s);
    return r;
}

/* _addr_text. */
static int put_address(line *l, PyObject *v) {
    if (PyLong_CheckExact(v)) {
        if (puts_(l, "0x") < 0) return FAILED;
        return put_hex(l, v, 0) < 0 ? FAILED : DONE;
    }
    if (!Py_IS_TYPE(v, M.symbol)) return ASK;
    PyObject *value = SLOT(v, M.s_value);
    if (!value) return ASK;
    if (value == Py_None) return put_symbol(l, v) < 0 ? FAILED : DONE;
    if (!PyLong_CheckExact(value)) return ASK;
    if (puts_(l, "0x") < 0 || put_hex(l, value, 0) < 0 || puts_(l, " <") < 0 || put_symbol(l, v) < 0 ||
        puts_(l, ">") < 0)
        return FAILED;
    return DONE;
}

/* The printer's expression_text of ``expr`` (text, error), kept for a Block without relocations
 * by its id, beside the Block itself (so that the id stays its own while kept). */
static PyObject *expression_of(ctx *c, PyObject *expr) {
    int plain = 0;
    if (Py_IS_TYPE(expr, M.block)) {
        PyObject *relocs = PyObject_GetAttr(expr, s_relocs);
        if (!relocs) return NULL;
        plain = PyTuple_CheckExact(relocs) && PyTuple_GET_SIZE(relocs) == 0;
        Py_DECREF(relocs);
    }
    PyObject *key = NULL;
    if (plain) {
        if (!(key = PyLong_FromVoidPtr(expr))) return NULL;
        PyObject *kept = PyDict_GetItemWithError(c->expressions, key);
        if (kept && PyTuple_CheckExact(kept) && PyTuple_GET_SIZE(kept) == 2 && PyTuple_GET_ITEM(kept, 0) == expr) {
            Py_DECREF(key);
            return Py_NewRef(PyTuple_GET_ITEM(kept, 1));
        }
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return NULL;
        }
    }
    PyObject *v = PyObject_CallMethodOneArg(c->printer, s_expression_text, expr);
    if (v && key) {
        PyObject *kept = PyTuple_Pack(2, expr, v);
        if (!kept || PyDict_SetItem(c->expressions, key, kept) < 0) Py_CLEAR(v);
        Py_XDECREF(kept);
    }
    Py_XDECREF(key);
    return v;
}

/* (text, error) as two strs, error NULL for None; 1 where the pair is not of that shape. */
static int pair_of(PyObject *pair, PyObject **text, PyObject **error) {
    if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) return 1;
    *text = PyTuple_GET_ITEM(pair, 0);
    *error = PyTuple_GET_ITEM(pair, 1);
    if (*error == Py_None) *error = NULL;
    return !PyUnicode_CheckExact(*text) || (*error && !PyUnicode_CheckExact(*error));
}

/* _loclist_text. */
static int put_loclist(ctx *c, line *l, PyObject *loc) {
    PyObject *entries = PyObject_GetAttr(loc, s_entries);
    if (!entries) return FAILED;
    int r = DONE;
    if (!PyList_CheckExact(entries)) {
        r = ASK;
        goto done;
    }
    if (PyList_GET_SIZE(entries) == 0) {
        r = puts_(l, "<empty list>") < 0 ? FAILED : DONE;
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(entries) && r == DONE; i++) {
        PyObject *e = PyList_GET_ITEM(entries, i);
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 3) {
            r = ASK;
            break;
        }
        Py_INCREF(e);
        PyObject *begin = PyTuple_GET_ITEM(e, 0), *end = PyTuple_GET_ITEM(e, 1), *expr = PyTuple_GET_ITEM(e, 2);
        if (i && puts_(l, " ") < 0) r = FAILED;
        else if (expr == Py_None) {
            if (puts_(l, "[base address ") < 0) r = FAILED;
            else if ((r = put_address(l, end)) == DONE && puts_(l, "]") < 0) r = FAILED;
        } else {
            PyObject *pair = expression_of(c, expr), *text, *error;
            if (!pair) r = FAILED;
            else if (pair_of(pair, &text, &error)) r = ASK;
            else if (puts_(l, "[") < 0) r = FAILED;
            else if ((r = put_address(l, begin)) != DONE) {
            } else if (puts_(l, ", ") < 0) r = FAILED;
            else if ((r = put_address(l, end)) != DONE) {
            } else if (puts_(l, "): ") < 0) r = FAILED;
            else if (error) {
                if (puts_(l, "<bad expression: ") < 0 || put_str(l, error) < 0 || puts_(l, ">") < 0) r = FAILED;
            } else if (put_str(l, text) < 0) r = FAILED;
            Py_XDECREF(pair);
        }
        Py_DECREF(e);
    }
done:
    Py_DECREF(entries);
    return r;
}

static int printable(PyObject *s) {
    if (!PyUnicode_IS_ASCII(s)) return 0;
    const unsigned char *p = PyUnicode_1BYTE_DATA(s);
    for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(s); i < n; i++)
        if (p[i] < 0x20 || p[i] > 0x7e || p[i] == '\\') return 0;
    return 1;
}

static int put_bytes(line *l, PyObject *b, const char *each, const char *sep) {
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(b);
    char tmp[8];
    for (Py_ssize_t i = 0, n = PyBytes_GET_SIZE(b); i < n; i++) {
        if (i && puts_(l, sep) < 0) return -1;
        int k = snprintf(tmp, sizeof tmp, each, p[i]);
        if (put(l, tmp, (size_t)k) < 0) return -1;
    }
    return 0;
}

/* The text of a value that depends on ``key`` alone (the key is taken): from ``memo``, or from
 * the printer's value_text where it is new. */
static int put_memo(ctx *c, line *l, PyObject *attr, PyObject *memo, PyObject *key) {
    if (!key) return FAILED;
    PyObject *text = PyDict_GetItemWithError(memo, key);
    if (text) Py_INCREF(text);
    else if (!PyErr_Occurred()) {
        text = PyObject_CallMethodOneArg(c->printer, s_value_text, attr);
        if (text && PyDict_SetItem(memo, key, text) < 0) Py_CLEAR(text);
    }
    Py_DECREF(key);
    if (!text) return FAILED;
    int r = put_obj(l, text);
    Py_DECREF(text);
    return r < 0 ? FAILED : DONE;
}

/* _value_text of an Attribute of the model's own class, or ASK. */
static int put_value(ctx *c, line *l, PyObject *attr) {
    PyObject *value = SLOT(attr, M.a_value), *name = SLOT(attr, M.a_name), *form = SLOT(attr, M.a_form),
             *relocs = SLOT(attr, M.a_relocs);
    if (!value || !name || !form || !relocs) return ASK;
    if (PyObject_TypeCheck(value, M.attribute)) return ASK;
    if (PyUnicode_Check(value)) {
        if (!PyUnicode_CheckExact(value) || !printable(value)) return ASK;
        if (puts_(l, "\"") < 0) return FAILED;
        const char *p = (const char *)PyUnicode_1BYTE_DATA(value);
        Py_ssize_t n = PyUnicode_GET_LENGTH(value), start = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            if (p[i] == '"') {
                if (put(l, p + start, (size_t)(i - start)) < 0 || puts_(l, "\\\"") < 0) return FAILED;
                start = i + 1;
            }
        return put(l, p + start, (size_t)(n - start)) < 0 || puts_(l, "\"") < 0 ? FAILED : DONE;
    }
    if (PyObject_TypeCheck(value, M.die)) return ASK;
    long fc = code_of(form), nc = code_of(name);
    if (fc == -2 || nc < 0) return ASK;
    if (fc >= F_REF_ADDR && fc <= F_REF_UDATA) {
        PyObject *target = SLOT(attr, M.a_target);
        if (!target || !PyLong_Check(target)) return ASK;
        /* a reference's text: by whether it names a type, and the target (as one int where
         * that fits: a tuple to make and hash costs more than the lookup) */
        int typed = nc == AT_TYPE || nc == AT_CONTAINING_TYPE, overflow = 0;
        long long at = PyLong_AsLongLongAndOverflow(target, &overflow);
        if (at == -1 && PyErr_Occurred()) return FAILED;
        if (!overflow && at >= 0 && at < (1LL << 61))
            return put_memo(c, l, attr, c->references, PyLong_FromLongLong(at << 1 | typed));
        return put_memo(c, l, attr, c->references, PyTuple_Pack(2, typed ? Py_True : Py_False, target));
    }
    if (PyObject_TypeCheck(value, M.block)) {
        int in = PySet_Contains(M.expression_attributes, name);
        if (in < 0) return FAILED;
        if ((fc == F_EXPRLOC || in) && fc != F_STRING && fc != F_STRP) {
            PyObject *pair = expression_of(c, value), *text, *error;
            if (!pair) return FAILED;
            int r = DONE;
            if (pair_of(pair, &text, &error)) r = ASK;
            else if (error) {
                if (puts_(l, "<bad expression: ") < 0 || put_str(l, error) < 0 || puts_(l, "> ") < 0 ||
                    put_bytes(l, value, "%02x", " ") < 0)
                    r = FAILED;
            } else if (PyUnicode_GET_LENGTH(text) == 0) r = puts_(l, "<empty>") < 0 ? FAILED : DONE;
            else r = put_str(l, text) < 0 ? FAILED : DONE;
            Py_DECREF(pair);
            return r;
        }
        if (puts_(l, "<") < 0 || put_bytes(l, value, "0x%02x", " ") < 0 || puts_(l, ">") < 0) return FAILED;
        return DONE;
    }
    if (value == Py_True && fc == F_FLAG_PRESENT) return puts_(l, "true") < 0 ? FAILED : DONE;
    if (!PyLong_CheckExact(value)) return ASK;
    if (!PyTuple_CheckExact(relocs)) return ASK;
    int named = PySet_Contains(M.named_values, name);
    if (named < 0) return FAILED;
    if (named) /* a named value's text, of an attribute without relocations: by (name, form, value) */
        return PyTuple_GET_SIZE(relocs) ? ASK : put_memo(c, l, attr, c->values, PyTuple_Pack(3, name, form, value));
    PyObject *sym = NULL;
    if (PyTuple_GET_SIZE(relocs)) {
        PyObject *first = PyTuple_GET_ITEM(relocs, 0);
        if (!Py_IS_TYPE(first, M.reloc) || PyTuple_GET_SIZE(first) != 3 ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(first, 0)))
            return ASK;
        int zero = PyObject_Not(PyTuple_GET_ITEM(first, 0));
        if (zero < 0) return FAILED;
        if (zero && PyTuple_GET_ITEM(first, 2) != Py_None) sym = PyTuple_GET_ITEM(first, 2);
    }
    if (fc == F_SDATA) {
        PyObject *s = PyObject_Str(value);
        if (!s) return FAILED;
        int r = put_str(l, s);
        Py_DECREF(s);
        if (r < 0) return FAILED;
    } else if (puts_(l, "0x") < 0 || put_hex(l, value, 0) < 0)
        return FAILED;
    if (sym && (puts_(l, " <") < 0 || put_symbol(l, sym) < 0 || puts_(l, ">") < 0)) return FAILED;
    if ((nc == AT_LOCATION || nc == AT_FRAME_BASE) && (fc == F_DATA4 || fc == F_SEC_OFFSET)) {
        PyObject *loc = PyObject_CallMethodOneArg(c->info, s_location_list_at, value);
        if (!loc) return FAILED;
        int r = DONE;
        if (loc != Py_None) r = puts_(l, ": ") < 0 ? FAILED : put_loclist(c, l, loc);
        Py_DECREF(loc);
        return r;
    }
    return DONE;
}

/* One attribute's line. */
static int attribute_line(ctx *c, line *l, const char *indent, PyObject *attr) {
    PyObject *name, *form;
    int own = Py_IS_TYPE(attr, M.attribute);
    if (own) {
        name = SLOT(attr, M.a_name);
        form = SLOT(attr, M.a_form);
        if (!name || !form) own = 0;
        else {
            Py_INCREF(name);
            Py_INCREF(form);
        }
    }
    if (!own) {
        name = PyObject_GetAttrString(attr, "name");
        form = name ? PyObject_GetAttrString(attr, "form") : NULL;
        if (!form) {
            Py_XDECREF(name);
            return -1;
        }
    }
    int r = -1;
    PyObject *at = NULL, *fm = NULL;
    if (form != Py_None && !(fm = name_of(c, c->forms, s_form_text, form))) goto done;
    if (!(at = name_of(c, c->ats, s_at_text, name))) goto done;
    if (puts_(l, "              ") < 0 || puts_(l, indent) < 0 || put_obj(l, at) < 0 || puts_(l, " [") < 0 ||
        (fm ? put_obj(l, fm) : puts_(l, "?")) < 0 || puts_(l, "]\t(") < 0)
        goto done;
    size_t mark = l->b.len;
    int ascii = l->ascii, v = own ? put_value(c, l, attr) : ASK;
    if (v == FAILED) goto done;
    if (v == ASK) {
        l->b.len = mark;
        l->ascii = ascii;
        PyObject *text = PyObject_CallMethodOneArg(c->printer, s_value_text, attr);
        if (!text) goto done;
        v = put_obj(l, text);
        Py_DECREF(text);
        if (v < 0) goto done;
    }
    if (puts_(l, ")") < 0) goto done;
    r = emit(l);
done:
    Py_XDECREF(at);
    Py_XDECREF(fm);
    Py_DECREF(name);
    Py_DECREF(form);
    return r;
}

/* The depth of a stack item that is a (DIE or None, int) pair this kernel takes, else -1. */
static Py_ssize_t depth_of(PyObject *item) {
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) return -1;
    PyObject *die = PyTuple_GET_ITEM(item, 0), *depth = PyTuple_GET_ITEM(item, 1);
    if (!PyLong_CheckExact(depth)) return -1;
    Py_ssize_t d = PyLong_AsSsize_t(depth);
    if (d < 0 || d > (PY_SSIZE_T_MAX >> 2)) {
        PyErr_Clear();
        return -1;
    }
    if (die == Py_None) return d;
    if (!Py_IS_TYPE(die, M.die)) return -1;
    if (!SLOT(die, M.die_tag) || !SLOT(die, M.die_offset) || !SLOT(die, M.die_has_children) ||
        !PyList_CheckExact(SLOT(die, M.die_attributes) ? SLOT(die, M.die_attributes) : Py_None) ||
        !PyLong_CheckExact(SLOT(die, M.die_offset)))
        return -1;
    return d;
}

static int push(PyObject *stack, PyObject *die, Py_ssize_t depth) {
    PyObject *d = PyLong_FromSsize_t(depth);
    if (!d) return -1;
    PyObject *t = PyTuple_Pack(2, die, d);
    Py_DECREF(d);
    if (!t) return -1;
    int r = PyList_Append(stack, t);
    Py_DECREF(t);
    return r;
}

/* One DIE (or the null entry, ``die`` None): its lines, its children pushed. */
static int die_entry(ctx *c, line *l, PyObject *die, Py_ssize_t depth, PyObject *stack) {
    char indent[2 * MAX_INDENT + 1], deep[48] = "";
    Py_ssize_t width = 2 * (depth < MAX_INDENT ? depth : MAX_INDENT);
    memset(indent, ' ', (size_t)width);
    indent[width] = 0;
    if (depth > MAX_INDENT) snprintf(deep, sizeof deep, "[depth %zd] ", depth);
    if (die == Py_None) {
        if (puts_(l, "            ") < 0 || puts_(l, indent) < 0 || puts_(l, deep) < 0 || puts_(l, "NULL") < 0 ||
            emit(l) < 0 || emit(l) < 0)
            return -1;
        return 0;
    }
    PyObject *tag = name_of(c, c->tags, s_tag_text, SLOT(die, M.die_tag));
    if (!tag) return -1;
    int r = puts_(l, "0x") < 0 || put_hex(l, SLOT(die, M.die_offset), 8) < 0 || puts_(l, ": ") < 0 ||
            puts_(l, indent) < 0 || puts_(l, deep) < 0 || put_obj(l, tag) < 0 || emit(l) < 0;
    Py_DECREF(tag);
    if (r) return -1;
    PyObject *attrs = SLOT(die, M.die_attributes);
    Py_INCREF(attrs);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(attrs); i++) {
        PyObject *a = Py_NewRef(PyList_GET_ITEM(attrs, i));
        r = attribute_line(c, l, indent, a);
        Py_DECREF(a);
        if (r < 0) break;
    }
    Py_DECREF(attrs);
    if (r < 0 || emit(l) < 0) return -1;
    PyObject *children = SLOT(die, M.die_children);
    if (!children) {
        PyErr_SetString(PyExc_AttributeError, "children");
        return -1;
    }
    Py_INCREF(children);
    int some = PyObject_IsTrue(children);
    if (some > 0) {
        PyObject *all = PySequence_List(children);
        r = all ? push(stack, Py_None, depth + 1) : -1;
        for (Py_ssize_t i = all ? PyList_GET_SIZE(all) - 1 : -1; i >= 0 && r == 0; i--)
            r = push(stack, PyList_GET_ITEM(all, i), depth + 1);
        Py_XDECREF(all);
    } else if (some == 0) {
        PyObject *has = SLOT(die, M.die_has_children);
        int t = has ? PyObject_IsTrue(has) : -1;
        if (!has) PyErr_SetString(PyExc_AttributeError, "has_children");
        r = t < 0 ? -1 : t ? push(stack, Py_None, depth + 1) : 0;
    } else
        r = -1;
    Py_DECREF(children);
    return r;
}

static PyObject *die_lines(PyObject *self, PyObject *args) {
    PyObject *printer, *stack;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "OO!n", &printer, &PyList_Type, &stack, &limit)) return NULL;
    if (load() < 0) return NULL;
    ctx c = {printer, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    PyObject **slots[7] = {&c.tags, &c.ats, &c.forms, &c.references, &c.values, &c.expressions, &c.info};
    PyObject *names[7] = {s_tags, s_ats, s_forms, s_references, s_values, s_expressions, s_info};
    PyObject *out = NULL;
    for (int i = 0; i < 7; i++) {
        *slots[i] = PyObject_GetAttr(printer, names[i]);
        if (!*slots[i]) goto done;
        if (i < 6 && !PyDict_CheckExact(*slots[i])) {
            out = Py_NewRef(Py_None);
            goto done;
        }
    }
    line l = {{NULL, 0, 0}, 1, 0};
    int failed = 0, declined = 0;
    while (PyList_GET_SIZE(stack) > 0 && l.lines < limit) {
        Py_ssize_t n = PyList_GET_SIZE(stack);
        PyObject *item = PyList_GET_ITEM(stack, n - 1);
        Py_ssize_t depth = depth_of(item);
        if (depth < 0) {
            declined = 1;
            break;
        }
        Py_INCREF(item);
        int r = PyList_SetSlice(stack, n - 1, n, NULL);
        if (r == 0) r = die_entry(&c, &l, PyTuple_GET_ITEM(item, 0), depth, stack);
        Py_DECREF(item);
        if (r < 0) {
            failed = 1;
            break;
        }
    }
    if (!failed) out = declined && !l.lines ? Py_NewRef(Py_None) : lines_made(&l);
    buffer_free(&l.b);
done:
    for (int i = 0; i < 7; i++) Py_XDECREF(*slots[i]);
    return out;
}

/* _loc_lines(printer, locations, start, limit): the lines of the .debug_loc block of the
 * location lists locations[start:start + limit], stopping before a list the kernel does not
 * take (None: it takes not even the first); ptxdwarf.dump._loc_lines. */
static PyObject *loc_lines(PyObject *self, PyObject *args) {
    PyObject *printer, *locations;
    Py_ssize_t start, limit;
    if (!PyArg_ParseTuple(args, "OO!nn", &printer, &PyList_Type, &locations, &start, &limit)) return NULL;
    if (load() < 0) return NULL;
    ctx c = {printer, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    c.expressions = PyObject_GetAttr(printer, s_expressions);
    if (!c.expressions) return NULL;
    PyObject *out = NULL;
    if (!PyDict_CheckExact(c.expressions) || start < 0 || limit < 1) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    line l = {{NULL, 0, 0}, 1, 0};
    int failed = 0, declined = 0;
    for (Py_ssize_t i = start; i < PyList_GET_SIZE(locations) && i - start < limit; i++) {
        size_t mark = l.b.len;
        int ascii = l.ascii;
        PyObject *loc = Py_NewRef(PyList_GET_ITEM(locations, i));
        PyObject *offset = PyObject_GetAttr(loc, s_offset);
        int r = offset ? DONE : FAILED;
        if (r == DONE && !PyLong_CheckExact(offset)) r = ASK;
        if (r == DONE && (puts_(&l, "0x") < 0 || put_hex(&l, offset, 8) < 0 || puts_(&l, ": ") < 0)) r = FAILED;
        if (r == DONE) r = put_loclist(&c, &l, loc);
        if (r == DONE && emit(&l) < 0) r = FAILED;
        Py_XDECREF(offset);
        Py_DECREF(loc);
        if (r == ASK) {
            l.b.len = mark;
            l.ascii = ascii;
            declined = 1;
            break;
        }
        if (r == FAILED) {
            failed = 1;
            break;
        }
    }
    if (!failed) out = declined && !l.lines ? Py_NewRef(Py_None) : lines_made(&l);
    buffer_free(&l.b);
done:
    Py_DECREF(c.expressions);
    return out;
}

/* ------------------------------------------------------------------ expressions */

/* The operand kinds of ptxdwarf.dwarf.expr._OPERANDS. */
enum { K_ADDR = 1, K_FIXED, K_ULEB, K_SLEB, K_BLOCK_ULEB, K_BLOCK_1 };

typedef struct {
    unsigned char kind, size, is_signed;
} operand;

/* Per operation code: its name (NULL: not an operation the reference knows), its operands. */
static struct {
    PyObject *names[256];
    operand operands[256][2];
    unsigned char count[256];
    PyObject *register_name;
    int ready;
} X;

/* An operand kind of the reference's table ("1u", "s", "B", ...), or 0. */
static int operand_of(PyObject *text, operand *out) {
    if (!PyUnicode_Check(text)) return 0;
    const char *k = PyUnicode_AsUTF8(text);
    if (!k) return -1;
    size_t n = strlen(k);
    out->is_signed = n && k[n - 1] == 's';
    if (!strcmp(k, "a")) out->kind = K_ADDR;
    else if (!strcmp(k, "u")) out->kind = K_ULEB;
    else if (!strcmp(k, "s")) out->kind = K_SLEB;
    else if (!strcmp(k, "B")) out->kind = K_BLOCK_ULEB;
    else if (!strcmp(k, "b")) out->kind = K_BLOCK_1;
    else if (!strcmp(k, "o")) out->kind = K_FIXED, out->size = 4;
    else if (n == 2 && (k[0] == '1' || k[0] == '2' || k[0] == '4' || k[0] == '8') && (k[1] == 'u' || k[1] == 's'))
        out->kind = K_FIXED, out->size = (unsigned char)(k[0] - '0');
    else return 0;
    return 1;
}

/* The operations' names and operands, read once from the reference's own tables (tried
 * again on the next call where that failed). */
static int load_expressions(void) {
    if (X.ready) return 0;
    for (int code = 0; code < 256; code++) Py_CLEAR(X.names[code]);
    Py_CLEAR(X.register_name);
    memset(X.count, 0, sizeof X.count);
    PyObject *operands = imported("ptxdwarf.dwarf.expr", "_OPERANDS");
    PyObject *known = operands ? imported("ptxdwarf.dwarf.expr", "_KNOWN") : NULL;
    PyObject *op_name = known ? imported("ptxdwarf.dwarf.constants", "op_name") : NULL;
    X.register_name = op_name ? imported("ptxdwarf.dwarf.expr", "register_name") : NULL;
    int r = -1;
    if (!X.register_name) goto done;
    if (!PyDict_Check(operands) || !PyAnySet_Check(known)) {
        PyErr_SetString(PyExc_TypeError, "the expression tables are not what the dump kernel was built for");
        goto done;
    }
    for (int code = 0; code < 256; code++) {
        PyObject *key = PyLong_FromLong(code);
        if (!key) goto done;
        PyObject *kinds = PyDict_GetItemWithError(operands, key);
        int in = kinds ? 1 : PyErr_Occurred() ? -1 : PySet_Contains(known, key);
        if (in > 0 && kinds) {
            if (!PyTuple_Check(kinds) || PyTuple_GET_SIZE(kinds) > 2) in = 0; /* the reference's alone */
            for (Py_ssize_t i = 0; in > 0 && i < PyTuple_GET_SIZE(kinds); i++) {
                int got = operand_of(PyTuple_GET_ITEM(kinds, i), &X.operands[code][i]);
                if (got <= 0) in = got;
            }
            if (in > 0) X.count[code] = (unsigned char)PyTuple_GET_SIZE(kinds);
        }
        if (in > 0 && !(X.names[code] = PyObject_CallOneArg(op_name, key))) in = -1;
        Py_DECREF(key);
        if (in < 0) goto done;
        if (X.names[code] && !PyUnicode_Check(X.names[code])) Py_CLEAR(X.names[code]);
    }
    X.ready = 1;
    r = 0;
done:
    Py_XDECREF(operands);
    Py_XDECREF(known);
    Py_XDECREF(op_name);
    return r;
}

/* An operand as expr._fmt_arg writes it: signed with its sign, others in hex from 10 on. */
static int put_operand(line *l, uint64_t v, int is_signed) {
    if (is_signed) return put_signed(l, (int64_t)v < 0 ? '-' : '+', (int64_t)v < 0 ? 0 - v : v);
    if (v >= 10) return put(l, "0x", 2) < 0 ? -1 : put_hex_u64(l, v, 0);
    char digit = (char)('0' + v);
    return put(l, &digit, 1);
}

/* _decoded_text(expr, address_size): an expression's operations as the text dump shows
 * them, (text, None); None for input the kernel does not take (a Block, with relocations; an
 * unknown operation, an operand past the end or past 64 bits: the reference says why). */
static PyObject *decoded_text(PyObject *self, PyObject *args) {
    PyObject *expr;
    int address_size;
    if (!PyArg_ParseTuple(args, "Oi", &expr, &address_size)) return NULL;
    if (!PyBytes_CheckExact(expr)) Py_RETURN_NONE;
    if (load_expressions() < 0) return NULL;
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(expr);
    Py_ssize_t size = PyBytes_GET_SIZE(expr);
    line l = {{NULL, 0, 0}, 1, 0};
    cursor c = cursor_of(data, size, 0);
    int failed = 0, declined = 0;
    while (!failed && !declined && c.p < c.end) {
        int code = *c.p++;
        if (!X.names[code]) { declined = 1; break; }
        uint64_t values[2] = {0, 0};
        int is_bytes[2] = {0, 0};
        const uint8_t *bytes[2] = {NULL, NULL};
        int count = X.count[code];
        for (int i = 0; i < count && !declined; i++) {
            operand o = X.operands[code][i];
            int overflow = 0;
            if (o.kind == K_ADDR) values[i] = cursor_fixed(&c, address_size == 8 ? 8 : 4);
            else if (o.kind == K_FIXED) {
                uint64_t v = cursor_fixed(&c, o.size);
                if (o.is_signed && o.size < 8 && (v >> (8 * o.size - 1)) & 1) v |= ~(uint64_t)0 << (8 * o.size);
                values[i] = v;
            } else if (o.kind == K_ULEB) values[i] = cursor_uleb(&c, &overflow);
            else if (o.kind == K_SLEB) values[i] = (uint64_t)cursor_sleb(&c, &overflow);
            else {
                uint64_t n = o.kind == K_BLOCK_1 ? cursor_fixed(&c, 1) : cursor_uleb(&c, &overflow);
                if (!c.bad && !overflow && n <= (uint64_t)(c.end - c.p)) {
                    is_bytes[i] = 1, bytes[i] = c.p, values[i] = n;
                    c.p += n;
                } else declined = 1;
            }
            if (c.bad || overflow) declined = 1;
        }
        if (declined) break;
        if (l.b.len && put(&l, ", ", 2) < 0) { failed = 1; break; }
        if (put_str(&l, X.names[code]) < 0) { failed = 1; break; }
        int first = 0;
        if ((code == 0x90 || code == 0x92) && count && !is_bytes[0]) {
            PyObject *number = PyLong_FromUnsignedLongLong(values[0]);
            PyObject *reg = number ? PyObject_CallOneArg(X.register_name, number) : NULL;
            Py_XDECREF(number);
            if (!reg) { failed = 1; break; }
            if (reg != Py_None && !PyUnicode_CheckExact(reg)) declined = 1;
            else if (reg != Py_None) {
                first = 1;
                if (put(&l, " ", 1) < 0 || put_str(&l, reg) < 0) failed = 1;
            }
            Py_DECREF(reg);
            if (failed || declined) break;
        }
        for (int i = first; i < count && !failed; i++) {
            if (put(&l, " ", 1) < 0) failed = 1;
            else if (is_bytes[i]) {
                if (!values[i]) failed = puts_(&l, "<empty>") < 0;
                else {
                    failed = put(&l, "0x", 2) < 0;
                    for (uint64_t k = 0; k < values[i] && !failed; k++) {
                        char hex[2] = {"0123456789abcdef"[bytes[i][k] >> 4], "0123456789abcdef"[bytes[i][k] & 15]};
                        failed = put(&l, hex, 2) < 0;
                    }
                }
            } else failed = put_operand(&l, values[i], X.operands[code][i].is_signed) < 0;
        }
    }
    PyObject *out = NULL;
    if (!failed) {
        if (declined) out = Py_NewRef(Py_None);
        else {
            PyObject *text = l.ascii ? PyUnicode_New((Py_ssize_t)l.b.len, 127)
                                     : PyUnicode_DecodeUTF8((const char *)l.b.data, (Py_ssize_t)l.b.len, "surrogatepass");
            if (text && l.ascii && l.b.len) memcpy(PyUnicode_1BYTE_DATA(text), l.b.data, l.b.len);
            out = text ? Py_BuildValue("(NO)", text, Py_None) : NULL;
        }
    }
    buffer_free(&l.b);
    return out;
}

static PyMethodDef methods[] = {
    {"_decoded_text", decoded_text, METH_VARARGS,
     "_decoded_text(expr, address_size): an expression's operations as the text dump shows them "
     "(ptxdwarf.dump._decoded_text)."},
    {"_die_lines", die_lines, METH_VARARGS,
     "_die_lines(printer, stack, limit): how many lines of the DIEs taken from stack, and their text "
     "(ptxdwarf.dump._die_lines)."},
    {"_loc_lines", loc_lines, METH_VARARGS,
     "_loc_lines(printer, locations, start, limit): how many of those lists have their line of the "
     ".debug_loc block made, and the lines' text (ptxdwarf.dump._loc_lines)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "dumptext", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_dumptext(void) {
    struct {
        PyObject **s;
        const char *text;
    } strings[] = {
        {&s_info, "info"}, {&s_tags, "tags"}, {&s_ats, "ats"}, {&s_forms, "forms"}, {&s_references, "references"}, {&s_values, "values"},
        {&s_expressions, "expressions"}, {&s_value_text, "value_text"}, {&s_expression_text, "expression_text"},
        {&s_tag_text, "tag_text"}, {&s_at_text, "at_text"}, {&s_form_text, "form_text"},
        {&s_location_list_at, "location_list_at"}, {&s_entries, "entries"}, {&s_relocs, "relocs"}, {&s_offset, "offset"},
        {&s_empty, ""}, {&s_x, "x"}, {&s_08x, "08x"},
    };
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if (!(*strings[i].s = PyUnicode_InternFromString(strings[i].text))) return NULL;
    return PyModule_Create(&module);
}
