/* The .debug_info decoder: the units of a section and their DIE trees, built as the model's
 * own objects (DIE, Attribute, Unit, Block, Reloc, Symbol, LocationList, which model() hands
 * over once); and the .debug_loc reader. The twins of ptxdwarf.dwarf.decode.decode_units and
 * read_location_lists. Any input they do not take (an unknown or indirect form, truncation, a
 * bad abbreviation code, a value past 64 bits, relocations out of order) gives None, and the
 * reference raises the error with its place. */
#include "common.h"
#include <structmember.h>

enum { F_ADDR = 0x01, F_BLOCK2 = 0x03, F_BLOCK4 = 0x04, F_DATA2 = 0x05, F_DATA4 = 0x06,
       F_DATA8 = 0x07, F_STRING = 0x08, F_BLOCK = 0x09, F_BLOCK1 = 0x0a, F_DATA1 = 0x0b,
       F_FLAG = 0x0c, F_SDATA = 0x0d, F_STRP = 0x0e, F_UDATA = 0x0f, F_REF_ADDR = 0x10,
       F_REF1 = 0x11, F_REF2 = 0x12, F_REF4 = 0x13, F_REF8 = 0x14, F_REF_UDATA = 0x15,
       F_INDIRECT = 0x16, F_SEC_OFFSET = 0x17, F_EXPRLOC = 0x18, F_FLAG_PRESENT = 0x19,
       F_REF_SIG8 = 0x20 };

/* The model's classes, and where the slots of DIE and Attribute live in their objects. */
static struct {
    PyTypeObject *die, *attribute, *unit, *block, *reloc, *symbol, *location_list, *resolver;
    Py_ssize_t die_tag, die_offset, die_abbrev_code, die_has_children, die_parent, die_children,
        die_attributes, die_size;
    Py_ssize_t a_name, a_form, a_value, a_relocs, a_target, a_offset;
    Py_ssize_t s_name, s_addend, s_value, r_labels, r_pending;
} M;

static PyObject *s_data, *s_relocs, *s_relocs_applied, *s_offset, *s_decls, *s_code, *s_tag,
    *s_has_children, *s_specs, *s_name, *s_addend, *s_tail, *s_open_scopes, *s_die, *s_offsets,
    *s_strings, *s_size, *s_surrogateescape, *s_value, *s_unresolved, *s_entries;

/* A decoded Attribute holds numbers, strings, blocks and relocations, none of which refers
 * back to it, so it is made untracked by the cyclic collector (as are its Relocs and their
 * tuple): the collector's walks of a decoded tree then see a fraction of its objects. Any
 * assignment to an attribute's slots tracks it again, so that a value given later (a DIE, in
 * a cycle) is seen as it would be in an attribute the reference made. */
static setattrofunc attribute_generic_setattro;
static int untrack_model;

static int attribute_setattro(PyObject *self, PyObject *name, PyObject *value) {
    int r = attribute_generic_setattro(self, name, value);
    if (r == 0 && !PyObject_GC_IsTracked(self)) PyObject_GC_Track(self);
    return r;
}

/* Untracks a Reloc made here (ints and a Symbol, which holds a string and ints). */
static void untrack_reloc(PyObject *r) {
    PyObject *symbol = PyTuple_GET_ITEM(r, 2);
    if (untrack_model && (Py_IS_TYPE(symbol, M.symbol) || !PyObject_GC_IsTracked(symbol)) &&
        PyObject_GC_IsTracked(r))
        PyObject_GC_UnTrack(r);
}

static PyObject *model(PyObject *self, PyObject *args) {
    PyTypeObject *t[8];
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!O!", &PyType_Type, &t[0], &PyType_Type, &t[1], &PyType_Type, &t[2],
                          &PyType_Type, &t[3], &PyType_Type, &t[4], &PyType_Type, &t[5], &PyType_Type, &t[6],
                          &PyType_Type, &t[7]))
        return NULL;
    if (!PyType_IsSubtype(t[3], &PyBytes_Type) || !PyType_IsSubtype(t[4], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "Block must be bytes and Reloc a tuple");
        return NULL;
    }
    if (slot_offset(t[0], "tag", &M.die_tag) || slot_offset(t[0], "offset", &M.die_offset) ||
        slot_offset(t[0], "abbrev_code", &M.die_abbrev_code) ||
        slot_offset(t[0], "has_children", &M.die_has_children) || slot_offset(t[0], "parent", &M.die_parent) ||
        slot_offset(t[0], "children", &M.die_children) || slot_offset(t[0], "attributes", &M.die_attributes) ||
        slot_offset(t[0], "size", &M.die_size) || slot_offset(t[1], "name", &M.a_name) ||
        slot_offset(t[1], "form", &M.a_form) || slot_offset(t[1], "value", &M.a_value) ||
        slot_offset(t[1], "relocs", &M.a_relocs) || slot_offset(t[1], "target", &M.a_target) ||
        slot_offset(t[1], "offset", &M.a_offset) || slot_offset(t[5], "name", &M.s_name) ||
        slot_offset(t[5], "addend", &M.s_addend) || slot_offset(t[5], "value", &M.s_value) ||
        slot_offset(t[7], "labels", &M.r_labels) || slot_offset(t[7], "pending", &M.r_pending))
        return NULL;
    /* Only a class defined in Python without a __dict__ is untracked (its deallocator
     * untracks with the checking call; nothing but its slots refers on). */
    untrack_model = PyType_HasFeature(t[1], Py_TPFLAGS_HEAPTYPE) && t[1]->tp_dictoffset == 0 &&
                    PyType_HasFeature(t[4], Py_TPFLAGS_HEAPTYPE) && t[4]->tp_dictoffset == 0;
    if (untrack_model && t[1]->tp_setattro != attribute_setattro) {
        attribute_generic_setattro = t[1]->tp_setattro;
        t[1]->tp_setattro = attribute_setattro;
    }
    PyTypeObject **keep[8] = {&M.die, &M.attribute, &M.unit, &M.block, &M.reloc, &M.symbol, &M.location_list,
                              &M.resolver};
    for (int i = 0; i < 8; i++) {
        Py_INCREF(t[i]);
        Py_XSETREF(*keep[i], t[i]);
    }
    Py_RETURN_NONE;
}

/* Stores an owned reference in a slot that holds nothing yet. */

/* ------------------------------------------------------------------ the abbreviations */

enum { K_FIXED, K_STRING, K_BLOCK, K_UDATA, K_SDATA, K_PRESENT, K_INDIRECT };

typedef struct {
    PyObject *name, *form; /* borrowed from the table's specs */
    int code, kind, size;  /* size: of a fixed form, or of a block's length (0: ULEB128) */
} spec;

typedef struct {
    PyObject *tag, *children; /* borrowed */
    int has_children, indirect;
    Py_ssize_t nspecs;
    spec *specs;
} plan;

typedef struct {
    PyObject *table, *keep; /* keep: what the plans borrow from */
    int version, address_size;
    Py_ssize_t nplans;
    plan *plans;
    Py_ssize_t ncodes;
    uint64_t *codes; /* sorted; order[i] is the plan of codes[i] */
    Py_ssize_t *order;
    Py_ssize_t ndense; /* codes below ndense are looked up in ``dense`` (-1: none) */
    Py_ssize_t *dense;
} planset;

static void planset_free(planset *ps) {
    for (Py_ssize_t i = 0; i < ps->nplans; i++) PyMem_Free(ps->plans[i].specs);
    PyMem_Free(ps->plans);
    PyMem_Free(ps->codes);
    PyMem_Free(ps->order);
    PyMem_Free(ps->dense);
    Py_XDECREF(ps->keep);
}

/* Kind and size of a form; 0 when the form is unknown. */
static int form_layout(uint64_t form, int version, int address_size, int *kind, int *size) {
    *size = 0;
    *kind = K_FIXED;
    switch (form) {
    case F_ADDR: *size = address_size; return 1;
    case F_REF_ADDR: *size = version == 2 ? address_size : 4; return 1;
    case F_DATA1: case F_FLAG: case F_REF1: *size = 1; return 1;
    case F_DATA2: case F_REF2: *size = 2; return 1;
    case F_DATA4: case F_REF4: case F_STRP: case F_SEC_OFFSET: *size = 4; return 1;
    case F_DATA8: case F_REF8: case F_REF_SIG8: *size = 8; return 1;
    case F_STRING: *kind = K_STRING; return 1;
    case F_BLOCK1: *kind = K_BLOCK; *size = 1; return 1;
    case F_BLOCK2: *kind = K_BLOCK; *size = 2; return 1;
    case F_BLOCK4: *kind = K_BLOCK; *size = 4; return 1;
    case F_BLOCK: case F_EXPRLOC: *kind = K_BLOCK; return 1;
    case F_UDATA: case F_REF_UDATA: *kind = K_UDATA; return 1;
    case F_SDATA: *kind = K_SDATA; return 1;
    case F_FLAG_PRESENT: *kind = K_PRESENT; return 1;
    case F_INDIRECT: *kind = K_INDIRECT; return 1;
    default: return 0;
    }
}

static int compare_codes(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The plans of ``table``'s declarations; 0 with no error set when a form is unknown (the
 * reference rejects the table), -1 on a Python error. */
static int planset_build(planset *ps, PyObject *table, int version, int address_size) {
    memset(ps, 0, sizeof *ps);
    ps->table = table;
    ps->version = version;
    ps->address_size = address_size;
    ps->keep = PyList_New(0);
    if (!ps->keep) return -1;
    PyObject *decls = PyObject_GetAttr(table, s_decls);
    if (!decls) return -1;
    PyObject *fast = PySequence_Fast(decls, "decls");
    Py_DECREF(decls);
    if (!fast) return -1;
    int result = -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    uint64_t *pairs = PyMem_Calloc(n ? (size_t)n : 1, 2 * sizeof(uint64_t));
    ps->plans = PyMem_Calloc(n ? (size_t)n : 1, sizeof(plan));
    if (!pairs || !ps->plans) { PyErr_NoMemory(); goto done; }
    if (PyList_Append(ps->keep, fast) < 0) goto done;
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *decl = PySequence_Fast_GET_ITEM(fast, i);
        plan *p = &ps->plans[ps->nplans];
        /* decl's attributes stay alive with it: the caller holds the table */
        PyObject *code = PyObject_GetAttr(decl, s_code), *tag = PyObject_GetAttr(decl, s_tag),
                 *children = PyObject_GetAttr(decl, s_has_children), *specs = PyObject_GetAttr(decl, s_specs);
        int kept_all = code && tag && children && specs && PyList_Append(ps->keep, code) == 0 &&
                       PyList_Append(ps->keep, tag) == 0 && PyList_Append(ps->keep, children) == 0 &&
                       PyList_Append(ps->keep, specs) == 0;
        Py_XDECREF(code);
        Py_XDECREF(tag);
        Py_XDECREF(children);
        Py_XDECREF(specs);
        if (!kept_all) goto done;
        if (!PyTuple_Check(specs)) { result = 0; goto done; }
        p->tag = tag;
        p->children = children;
        p->has_children = PyObject_IsTrue(children);
        if (p->has_children < 0) goto done;
        p->nspecs = PyTuple_GET_SIZE(specs);
        p->specs = PyMem_Calloc(p->nspecs ? (size_t)p->nspecs : 1, sizeof(spec));
        if (!p->specs) { PyErr_NoMemory(); goto done; }
        ps->nplans++;
        for (Py_ssize_t j = 0; j < p->nspecs; j++) {
            PyObject *pair = PyTuple_GET_ITEM(specs, j);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyLong_Check(PyTuple_GET_ITEM(pair, 1))) {
                result = 0;
                goto done;
            }
            spec *s = &p->specs[j];
            s->name = PyTuple_GET_ITEM(pair, 0);
            s->form = PyTuple_GET_ITEM(pair, 1);
            uint64_t form = PyLong_AsUnsignedLongLong(s->form);
            if (form == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); result = 0; goto done; }
            if (!form_layout(form, version, address_size, &s->kind, &s->size)) { result = 0; goto done; }
            s->code = (int)form;
            if (s->kind == K_INDIRECT) p->indirect = 1;
        }
        if (!PyLong_Check(code)) { result = 0; goto done; }
        uint64_t c = PyLong_AsUnsignedLongLong(code);
        if (c == (uint64_t)-1 && PyErr_Occurred()) {
            PyErr_Clear(); /* negative or past 64 bits: no code read in range matches it */
            continue;
        }
        pairs[2 * kept] = c;
        pairs[2 * kept + 1] = (uint64_t)(ps->nplans - 1);
        kept++;
    }
    qsort(pairs, (size_t)kept, 2 * sizeof(uint64_t), compare_codes);
    /* one plan per code: the last declared, as a dict keeps the last */
    ps->codes = PyMem_Calloc(kept ? (size_t)kept : 1, sizeof(uint64_t));
    ps->order = PyMem_Calloc(kept ? (size_t)kept : 1, sizeof(Py_ssize_t));
    if (!ps->codes || !ps->order) { PyErr_NoMemory(); goto done; }
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < kept; i++) {
        if (m && ps->codes[m - 1] == pairs[2 * i]) m--;
        ps->codes[m] = pairs[2 * i];
        ps->order[m] = (Py_ssize_t)pairs[2 * i + 1];
        m++;
    }
    ps->ndense = 0;
    if (m && ps->codes[m - 1] < (uint64_t)(4 * m + 256)) {
        ps->ndense = (Py_ssize_t)ps->codes[m - 1] + 1;
        ps->dense = PyMem_Malloc((size_t)ps->ndense * sizeof(Py_ssize_t));
        if (!ps->dense) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t i = 0; i < ps->ndense; i++) ps->dense[i] = -1;
        for (Py_ssize_t i = 0; i < m; i++) ps->dense[ps->codes[i]] = ps->order[i];
    }
    ps->ncodes = m;
    result = 1;
done:
    PyMem_Free(pairs);
    Py_DECREF(fast);
    return result;
}

static plan *plan_of(const planset *ps, uint64_t code) {
    Py_ssize_t i = -1;
    if ((uint64_t)ps->ndense > code) {
        i = ps->dense[code];
    } else {
        Py_ssize_t lo = 0, hi = ps->ncodes;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (ps->codes[mid] < code) lo = mid + 1;
            else hi = mid;
        }
        if (lo < ps->ncodes && ps->codes[lo] == code) i = ps->order[lo];
    }
    return i < 0 ? NULL : &ps->plans[i];
}

/* ------------------------------------------------------------------ one call's state */

typedef struct {
    const uint8_t *data;
    Py_ssize_t size;
    PyObject *relocs; /* a tuple of the image's Reloc tuples */
    Py_ssize_t nrelocs, rpos; /* rpos: the first relocation not passed yet */
    int64_t *roff;
    int applied;
    PyObject *resolve;
    PyObject *strings; /* a tuple of .debug_str's bytes, or NULL: no .debug_str */
    Py_ssize_t nstrings;
    int64_t *soff, ssize;
    PyObject **scache; /* the str of each whole string, once made */
    PyObject *tables;  /* offset -> AbbrevTable */
    PyObject *setindex; /* (id(table), version, address size) -> index in sets */
    planset *sets;
    Py_ssize_t nsets, capsets;
    PyObject **stack; /* the open parents (NULL: the root's, None) */
    Py_ssize_t depth, capstack;
    PyObject *blocks; /* bytes -> the one Block of that content without relocations, or NULL */
} decoder;

/* resolve(symbol): where the resolver is the model's Resolver and the symbol a Symbol of str
 * name and int addend, its lookup (Resolver.__call__) made here as long as it needs no section
 * read for its labels; else the call. */
static PyObject *resolved(decoder *d, PyObject *symbol) {
    PyObject *resolve = d->resolve;
    if (Py_IS_TYPE(resolve, M.resolver) && Py_IS_TYPE(symbol, M.symbol)) {
        PyObject *labels = SLOT(resolve, M.r_labels), *pending = SLOT(resolve, M.r_pending);
        PyObject *value = SLOT(symbol, M.s_value), *name = SLOT(symbol, M.s_name), *addend = SLOT(symbol, M.s_addend);
        if (labels && pending && value && name && addend && PyDict_CheckExact(labels) && PyList_CheckExact(pending) &&
            PyUnicode_CheckExact(name) && PyUnicode_GET_LENGTH(name) > 0 && PyLong_CheckExact(addend)) {
            if (value != Py_None) return Py_NewRef(value);
            if (PyUnicode_READ_CHAR(name, 0) == '.') return Py_NewRef(addend);
            PyObject *offset = PyDict_GetItemWithError(labels, name);
            if (!offset && PyErr_Occurred()) return NULL;
            if (offset && PyLong_CheckExact(offset)) return PyNumber_Add(offset, addend);
            if (!offset && PyList_GET_SIZE(pending) == 0) return Py_NewRef(addend);
        }
    }
    return PyObject_CallOneArg(resolve, symbol);
}

static void decoder_free(decoder *d) {
    Py_XDECREF(d->relocs);
    PyMem_Free(d->roff);
    if (d->scache)
        for (Py_ssize_t i = 0; i < d->nstrings; i++) Py_XDECREF(d->scache[i]);
    PyMem_Free(d->scache);
    Py_XDECREF(d->strings);
    PyMem_Free(d->soff);
    Py_XDECREF(d->tables);
    Py_XDECREF(d->setindex);
    for (Py_ssize_t i = 0; i < d->nsets; i++) planset_free(&d->sets[i]);
    PyMem_Free(d->sets);
    PyMem_Free(d->stack);
    Py_XDECREF(d->blocks);
}

/* An int of a list as int64; 0 with no error when it is not one. */
static int as_int64(PyObject *o, int64_t *v) {
    if (!PyLong_Check(o)) return 0;
    int over = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &over);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (over) return 0;
    *v = x;
    return 1;
}

static int decoder_relocs(decoder *d, PyObject *image) {
    PyObject *relocs = PyObject_GetAttr(image, s_relocs);
    if (!relocs) return -1;
    d->relocs = PySequence_Tuple(relocs);
    Py_DECREF(relocs);
    if (!d->relocs) return -1;
    d->nrelocs = PyTuple_GET_SIZE(d->relocs);
    d->roff = PyMem_Malloc((size_t)(d->nrelocs ? d->nrelocs : 1) * sizeof(int64_t));
    if (!d->roff) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < d->nrelocs; i++) {
        PyObject *r = PyTuple_GET_ITEM(d->relocs, i);
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) return 0;
        int ok = as_int64(PyTuple_GET_ITEM(r, 0), &d->roff[i]);
        if (ok <= 0) return ok;
        if (i && d->roff[i] < d->roff[i - 1]) return 0;
    }
    return 1;
}

static int decoder_strings(decoder *d, PyObject *strings) {
    if (strings == Py_None) return 1;
    PyObject *offsets = PyObject_GetAttr(strings, s_offsets);
    if (!offsets) return -1;
    PyObject *offs = PySequence_Tuple(offsets);
    Py_DECREF(offsets);
    if (!offs) return -1;
    int result = -1;
    PyObject *raw = PyObject_GetAttr(strings, s_strings);
    if (raw) {
        d->strings = PySequence_Tuple(raw);
        Py_DECREF(raw);
    }
    PyObject *size = d->strings ? PyObject_GetAttr(strings, s_size) : NULL;
    if (!size) goto done;
    result = as_int64(size, &d->ssize);
    Py_DECREF(size);
    if (result <= 0) goto done;
    result = 0;
    d->nstrings = PyTuple_GET_SIZE(d->strings);
    if (PyTuple_GET_SIZE(offs) != d->nstrings) goto done;
    d->soff = PyMem_Malloc((size_t)(d->nstrings ? d->nstrings : 1) * sizeof(int64_t));
    d->scache = PyMem_Calloc((size_t)(d->nstrings ? d->nstrings : 1), sizeof(PyObject *));
    if (!d->soff || !d->scache) { PyErr_NoMemory(); result = -1; goto done; }
    for (Py_ssize_t i = 0; i < d->nstrings; i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(d->strings, i))) goto done;
        result = as_int64(PyTuple_GET_ITEM(offs, i), &d->soff[i]);
        if (result <= 0) goto done;
        result = 0;
        if (i && d->soff[i] <= d->soff[i - 1]) goto done;
    }
    result = 1;
done:
    Py_DECREF(offs);
    return result;
}

/* The index of the last relocation at ``at``, or -1. Offsets asked for never decrease. */
static Py_ssize_t reloc_at(decoder *d, int64_t at) {
    while (d->rpos < d->nrelocs && d->roff[d->rpos] < at) d->rpos++;
    Py_ssize_t i = d->rpos;
    if (i >= d->nrelocs || d->roff[i] != at) return -1;
    while (i + 1 < d->nrelocs && d->roff[i + 1] == at) i++;
    return i;
}

static PyObject *new_reloc(int64_t offset, PyObject *size, PyObject *symbol) {
    PyObject *r = M.reloc->tp_alloc(M.reloc, 3);
    if (!r) return NULL;
    PyObject *off = PyLong_FromLongLong(offset);
    if (!off) { Py_DECREF(r); return NULL; }
    PyTuple_SET_ITEM(r, 0, off);
    Py_INCREF(size);
    PyTuple_SET_ITEM(r, 1, size);
    Py_INCREF(symbol);
    PyTuple_SET_ITEM(r, 2, symbol);
    untrack_reloc(r);
    return r;
}

#define RELOC_ITEM(d, i, k) PyTuple_GET_ITEM(PyTuple_GET_ITEM((d)->relocs, (i)), (k))

/* The relocations in [first, end), moved to be relative to first. */
static PyObject *relocs_in(decoder *d, int64_t first, int64_t end) {
    while (d->rpos < d->nrelocs && d->roff[d->rpos] < first) d->rpos++;
    Py_ssize_t hi = d->rpos;
    while (hi < d->nrelocs && d->roff[hi] < end) hi++;
    PyObject *t = PyTuple_New(hi - d->rpos);
    if (!t) return NULL;
    int untracked = 1;
    for (Py_ssize_t i = d->rpos; i < hi; i++) {
        PyObject *r = new_reloc(d->roff[i] - first, RELOC_ITEM(d, i, 1), RELOC_ITEM(d, i, 2));
        if (!r) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i - d->rpos, r);
        if (PyObject_GC_IsTracked(r)) untracked = 0;
    }
    if (untracked && untrack_model && PyObject_GC_IsTracked(t)) PyObject_GC_UnTrack(t);
    return t;
}

static PyObject *utf8(const uint8_t *p, Py_ssize_t n) {
    return PyUnicode_DecodeUTF8((const char *)p, n, "surrogateescape");
}

/* The string at ``offset`` of .debug_str; NULL with no error set where the reference fails. */
static PyObject *string_at(decoder *d, PyObject *offset) {
    int64_t at;
    if (!d->strings) return NULL;
    if (as_int64(offset, &at) <= 0) return NULL;
    Py_ssize_t lo = 0, hi = d->nstrings;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (d->soff[mid] <= at) lo = mid + 1;
        else hi = mid;
    }
    Py_ssize_t i = lo - 1;
    if (i < 0 || at >= d->ssize) return NULL;
    PyObject *raw = PyTuple_GET_ITEM(d->strings, i);
    int64_t skip = at - d->soff[i];
    Py_ssize_t len = PyBytes_GET_SIZE(raw);
    if (skip == 0) {
        if (!d->scache[i]) d->scache[i] = utf8((const uint8_t *)PyBytes_AS_STRING(raw), len);
        Py_XINCREF(d->scache[i]);
        return d->scache[i];
    }
    if (skip > len) skip = len;
    return utf8((const uint8_t *)PyBytes_AS_STRING(raw) + skip, len - (Py_ssize_t)skip);
}

/* ------------------------------------------------------------------ DIEs */

/* SLEB128 that sets *overflow where the value does not fit 64 bits. */
static PyObject *empty_tuple;

static int is_relocatable(int form) {
    return form == F_ADDR || form == F_DATA4 || form == F_DATA8 || form == F_STRP || form == F_SEC_OFFSET ||
           form == F_REF_ADDR;
}

static int is_ref(int form) {
    return form == F_REF1 || form == F_REF2 || form == F_REF4 || form == F_REF8 || form == F_REF_UDATA;
}

static PyObject *plus(Py_ssize_t base, uint64_t value) {
    if (value <= (uint64_t)(PY_SSIZE_T_MAX - base)) return PyLong_FromSsize_t(base + (Py_ssize_t)value);
    PyObject *a = PyLong_FromSsize_t(base), *b = PyLong_FromUnsignedLongLong(value);
    PyObject *sum = a && b ? PyNumber_Add(a, b) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(b);
    return sum;
}

/* A Block (without its relocs yet) of the n bytes at p. */
static PyObject *block_of(const uint8_t *p, Py_ssize_t n) {
#if PY_VERSION_HEX < 0x030E0000
    /* what bytes.__new__ does for a subclass, without the bytes object in between */
    PyObject *block = M.block->tp_alloc(M.block, n);
    if (!block) return NULL;
    memcpy(PyBytes_AS_STRING(block), p, (size_t)n);
    PyBytes_AS_STRING(block)[n] = 0;
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
    ((PyBytesObject *)block)->ob_shash = -1;
    _Pragma("GCC diagnostic pop")
    return block;
#else
    PyObject *raw = PyBytes_FromStringAndSize((const char *)p, n);
    PyObject *args = raw ? PyTuple_Pack(1, raw) : NULL;
    PyObject *block = args ? PyBytes_Type.tp_new(M.block, args, NULL) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(raw);
    return block;
#endif
}

/* The one Block of the n bytes at p without relocations, from d->blocks (made and kept there
 * on first use). */
static PyObject *shared_block(decoder *d, const uint8_t *p, Py_ssize_t n) {
    if (!d->blocks && !(d->blocks = PyDict_New())) return NULL;
    PyObject *key = PyBytes_FromStringAndSize((const char *)p, n);
    if (!key) return NULL;
    PyObject *block = PyDict_GetItemWithError(d->blocks, key);
    if (block) {
        Py_INCREF(block);
    } else if (!PyErr_Occurred() && (block = block_of(p, n))) {
        if (PyObject_SetAttr(block, s_relocs, empty_tuple) < 0 || PyDict_SetItem(d->blocks, key, block) < 0)
            Py_CLEAR(block);
    }
    Py_DECREF(key);
    return block;
}

/* A Block of the n bytes at ``first`` with the relocations inside them (also in *relocs); one
 * for each content where there are none. */
static PyObject *new_block(decoder *d, Py_ssize_t first, Py_ssize_t n, PyObject **relocs) {
    *relocs = d->nrelocs ? relocs_in(d, first, first + n) : (Py_INCREF(empty_tuple), empty_tuple);
    if (!*relocs) return NULL;
    if (PyTuple_GET_SIZE(*relocs) == 0) {
        PyObject *block = shared_block(d, d->data + first, n);
        if (!block) Py_CLEAR(*relocs);
        return block;
    }
    PyObject *block = block_of(d->data + first, n);
    if (!block || PyObject_SetAttr(block, s_relocs, *relocs) < 0) {
        Py_CLEAR(*relocs);
        Py_XDECREF(block);
        return NULL;
    }
    return block;
}

/* Reads one attribute at c into a new Attribute: 1, 0 (declined), -1 (error). */
static int read_attribute(decoder *d, const spec *s, cursor *c, Py_ssize_t unit_offset, PyObject **out) {
    Py_ssize_t at = cursor_offset(c);
    PyObject *value = NULL, *relocs = NULL, *target = NULL;
    int over = 0;
    switch (s->kind) {
    case K_FIXED: {
        uint64_t v = cursor_fixed(c, s->size);
        if (c->bad) return 0;
        if (is_relocatable(s->code) && d->nrelocs) {
            Py_ssize_t i = reloc_at(d, at);
            if (i >= 0) {
                PyObject *r = new_reloc(0, RELOC_ITEM(d, i, 1), RELOC_ITEM(d, i, 2));
                if (!r) return -1;
                relocs = PyTuple_Pack(1, r);
                if (relocs && untrack_model && !PyObject_GC_IsTracked(r)) PyObject_GC_UnTrack(relocs);
                Py_DECREF(r);
                if (!relocs) return -1;
                if (!d->applied) {
                    value = resolved(d, RELOC_ITEM(d, i, 2));
                    if (!value) goto error;
                }
            }
        }
        if (!value) value = PyLong_FromUnsignedLongLong(v);
        if (!value) goto error;
        if (is_ref(s->code)) {
            target = plus(unit_offset, v);
            if (!target) goto error;
        } else if (s->code == F_REF_ADDR) {
            Py_INCREF(value);
            target = value;
        } else if (s->code == F_STRP) {
            target = value;
            value = string_at(d, target);
            if (!value) {
                Py_XDECREF(relocs);
                Py_DECREF(target);
                return PyErr_Occurred() ? -1 : 0;
            }
        }
        break;
    }
    case K_STRING: {
        const uint8_t *stop = memchr(c->p, 0, (size_t)(c->end - c->p));
        if (!stop) return 0;
        value = utf8(c->p, stop - c->p);
        if (!value) return -1;
        c->p = stop + 1;
        break;
    }
    case K_BLOCK: {
        uint64_t length = s->size ? cursor_fixed(c, s->size) : cursor_uleb(c, &over);
        if (c->bad || over || length > (uint64_t)(c->end - c->p)) return 0;
        Py_ssize_t first = cursor_offset(c), n = (Py_ssize_t)length;
        c->p += n;
        value = new_block(d, first, n, &relocs);
        if (!value) return -1;
        break;
    }
    case K_UDATA: {
        uint64_t v = cursor_uleb(c, &over);
        if (c->bad || over) return 0;
        value = PyLong_FromUnsignedLongLong(v);
        if (!value) return -1;
        if (s->code == F_REF_UDATA) {
            target = plus(unit_offset, v);
            if (!target) goto error;
        }
        break;
    }
    case K_SDATA: {
        int64_t v = cursor_sleb(c, &over);
        if (c->bad || over) return 0;
        value = PyLong_FromLongLong(v);
        if (!value) return -1;
        break;
    }
    case K_PRESENT:
        Py_INCREF(Py_True);
        value = Py_True;
        break;
    default:
        return 0;
    }
    PyObject *a = M.attribute->tp_alloc(M.attribute, 0);
    PyObject *offset = a ? PyLong_FromSsize_t(at) : NULL;
    if (!offset) { Py_XDECREF(a); goto error; }
    Py_INCREF(s->name);
    SLOT(a, M.a_name) = s->name;
    Py_INCREF(s->form);
    SLOT(a, M.a_form) = s->form;
    SLOT(a, M.a_value) = value;
    if (!relocs) {
        Py_INCREF(empty_tuple);
        relocs = empty_tuple;
    }
    SLOT(a, M.a_relocs) = relocs;
    if (!target) {
        Py_INCREF(Py_None);
        target = Py_None;
    }
    SLOT(a, M.a_target) = target;
    SLOT(a, M.a_offset) = offset;
    if (untrack_model) PyObject_GC_UnTrack(a);
    *out = a;
    return 1;
error:
    Py_XDECREF(value);
    Py_XDECREF(relocs);
    Py_XDECREF(target);
    return -1;
}

static int push(decoder *d, PyObject *parent) {
    if (d->depth == d->capstack) {
        Py_ssize_t cap = d->capstack ? 2 * d->capstack : 64;
        PyObject **stack = PyMem_Realloc(d->stack, (size_t)cap * sizeof(PyObject *));
        if (!stack) { PyErr_NoMemory(); return -1; }
        d->stack = stack;
        d->capstack = cap;
    }
    d->stack[d->depth++] = parent;
    return 0;
}

static PyObject *new_die(const plan *p, PyObject *parent, Py_ssize_t offset, uint64_t code) {
    PyObject *die = M.die->tp_alloc(M.die, 0);
    if (!die) return NULL;
    Py_INCREF(p->tag);
    SLOT(die, M.die_tag) = p->tag;
    Py_INCREF(p->children);
    SLOT(die, M.die_has_children) = p->children;
    if (!parent) parent = Py_None;
    Py_INCREF(parent);
    SLOT(die, M.die_parent) = parent;
    if (!(SLOT(die, M.die_offset) = PyLong_FromSsize_t(offset)) ||
        !(SLOT(die, M.die_abbrev_code) = PyLong_FromUnsignedLongLong(code)) ||
        !(SLOT(die, M.die_children) = PyList_New(0)) ||
        !(SLOT(die, M.die_attributes) = PyList_New(p->nspecs))) {
        Py_DECREF(die);
        return NULL;
    }
    return die;
}

/* The DIE tree of the unit whose DIEs are in [pos, end): 1, 0 (declined), -1 (error). */
static int decode_dies(decoder *d, const planset *ps, PyObject *unit, Py_ssize_t unit_offset, Py_ssize_t pos,
                       Py_ssize_t end) {
    PyObject *root = NULL, *parent = NULL, *tail = NULL;
    int result = 0;
    d->depth = 0;
    while (pos < end) {
        Py_ssize_t die_start = pos;
        cursor c = cursor_of(d->data, d->size, pos);
        int over = 0;
        uint64_t code = cursor_uleb(&c, &over);
        if (c.bad || over) goto done;
        pos = cursor_offset(&c);
        if (code == 0) {
            if (d->depth == 0) {
                if (!root) goto done;
                tail = PyBytes_FromStringAndSize((const char *)d->data + die_start, end - die_start);
                if (!tail) goto error;
                pos = end;
                break;
            }
            parent = d->stack[--d->depth];
            if (d->depth == 0) {
                /* the root's children are closed; what is left is padding */
                Py_ssize_t from = pos < end ? pos : end;
                tail = PyBytes_FromStringAndSize((const char *)d->data + from, end - from);
                if (!tail) goto error;
                pos = end;
                break;
            }
            continue;
        }
        if (root && !parent) {
            tail = PyBytes_FromStringAndSize((const char *)d->data + die_start, end - die_start);
            if (!tail) goto error;
            pos = end;
            break;
        }
        const plan *p = plan_of(ps, code);
        if (!p || p->indirect || pos > end) goto done;
        PyObject *die = new_die(p, parent, die_start, code);
        if (!die) goto error;
        PyObject *attrs = SLOT(die, M.die_attributes);
        c = cursor_of(d->data, end, pos);
        for (Py_ssize_t i = 0; i < p->nspecs; i++) {
            PyObject *a;
            int r = read_attribute(d, &p->specs[i], &c, unit_offset, &a);
            if (r <= 0) {
                Py_DECREF(die);
                if (r < 0) goto error;
                goto done;
            }
            PyList_SET_ITEM(attrs, i, a);
        }
        pos = cursor_offset(&c);
        if (!(SLOT(die, M.die_size) = PyLong_FromSsize_t(pos - die_start))) {
            Py_DECREF(die);
            goto error;
        }
        if (!parent) {
            root = die;
        } else {
            int r = PyList_Append(SLOT(parent, M.die_children), die);
            Py_DECREF(die);
            if (r < 0) goto error;
        }
        if (p->has_children) {
            if (push(d, parent) < 0) goto error;
            parent = die;
        }
    }
    if (pos > end || !root) goto done;
    PyObject *scopes = PyLong_FromSsize_t(d->depth);
    if (!scopes) goto error;
    int bad = PyObject_SetAttr(unit, s_die, root) < 0 || (tail && PyObject_SetAttr(unit, s_tail, tail) < 0) ||
              PyObject_SetAttr(unit, s_open_scopes, scopes) < 0;
    Py_DECREF(scopes);
    if (bad) goto error;
    result = 1;
    goto done;
error:
    result = -1;
done:
    Py_XDECREF(root);
    Py_XDECREF(tail);
    return result;
}

/* ------------------------------------------------------------------ units */

static planset *planset_for(decoder *d, PyObject *table, int version, int address_size, int *status) {
    PyObject *key = Py_BuildValue("(Nii)", PyLong_FromVoidPtr(table), version, address_size);
    if (!key) { *status = -1; return NULL; }
    PyObject *index = PyDict_GetItemWithError(d->setindex, key);
    if (index) {
        Py_DECREF(key);
        return &d->sets[PyLong_AsSsize_t(index)];
    }
    if (PyErr_Occurred()) { Py_DECREF(key); *status = -1; return NULL; }
    if (d->nsets == d->capsets) {
        Py_ssize_t cap = d->capsets ? 2 * d->capsets : 4;
        planset *sets = PyMem_Realloc(d->sets, (size_t)cap * sizeof(planset));
        if (!sets) { Py_DECREF(key); PyErr_NoMemory(); *status = -1; return NULL; }
        d->sets = sets;
        d->capsets = cap;
    }
    planset *ps = &d->sets[d->nsets];
    int r = planset_build(ps, table, version, address_size);
    d->nsets++; /* freed with the decoder, built or not */
    if (r <= 0) { Py_DECREF(key); *status = r; return NULL; }
    PyObject *at = PyLong_FromSsize_t(d->nsets - 1);
    r = at ? PyDict_SetItem(d->setindex, key, at) : -1;
    Py_XDECREF(at);
    Py_DECREF(key);
    if (r < 0) { *status = -1; return NULL; }
    return ps;
}

static uint32_t u32_at(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The unit at ``start``, appended to ``units``: 1, 0 (declined), -1 (error); *next: its end. */
static int decode_unit(decoder *d, Py_ssize_t start, PyObject *units, Py_ssize_t *next) {
    const uint8_t *data = d->data;
    if (start + 11 > d->size) return 0;
    uint32_t length = u32_at(data + start);
    int version = data[start + 4] | data[start + 5] << 8;
    if (length >= 0xfffffff0u || version < 2 || version > 4) return 0;
    Py_ssize_t end = start + 4 + (Py_ssize_t)length;
    if (end > d->size) return 0;
    uint32_t stored = u32_at(data + start + 6);
    int address_size = data[start + 10];
    if (address_size != 4 && address_size != 8) return 0;
    PyObject *abbrev_offset = NULL, *table_offset = NULL;
    Py_ssize_t i = d->nrelocs ? reloc_at(d, start + 6) : -1;
    if (i >= 0) {
        PyObject *sym = RELOC_ITEM(d, i, 2);
        PyObject *name = PyObject_GetAttr(sym, s_name), *addend = PyObject_GetAttr(sym, s_addend);
        if (name && addend)
            abbrev_offset = d->applied ? PyObject_CallFunction((PyObject *)M.symbol, "OOk", name, addend, (unsigned long)stored)
                                       : PyObject_CallFunctionObjArgs((PyObject *)M.symbol, name, addend, Py_None, NULL);
        Py_XDECREF(name);
        Py_XDECREF(addend);
        if (!abbrev_offset) return -1;
        table_offset = d->applied ? PyLong_FromUnsignedLong(stored) : resolved(d, sym);
    } else {
        abbrev_offset = PyLong_FromUnsignedLong(stored);
        Py_XINCREF(abbrev_offset);
        table_offset = abbrev_offset;
    }
    if (!abbrev_offset || !table_offset) { Py_XDECREF(abbrev_offset); Py_XDECREF(table_offset); return -1; }
    int result = -1;
    PyObject *unit = NULL;
    PyObject *table = PyDict_GetItemWithError(d->tables, table_offset);
    if (!table) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    unit = PyObject_CallFunction((PyObject *)M.unit, "iiOOnkO", version, address_size, abbrev_offset, Py_None,
                                 start, (unsigned long)length, table);
    if (!unit) goto done;
    int status = 0;
    planset *ps = planset_for(d, table, version, address_size, &status);
    if (!ps) { result = status; goto done; }
    result = decode_dies(d, ps, unit, start, start + 11, end);
    if (result > 0) {
        result = PyList_Append(units, unit) < 0 ? -1 : 1;
        *next = end;
    }
done:
    Py_XDECREF(unit);
    Py_DECREF(abbrev_offset);
    Py_DECREF(table_offset);
    return result;
}

static int decoder_tables(decoder *d, PyObject *tables) {
    d->tables = PyDict_New();
    d->setindex = PyDict_New();
    if (!d->tables || !d->setindex) return -1;
    PyObject *it = PyObject_GetIter(tables);
    if (!it) return -1;
    PyObject *t;
    while ((t = PyIter_Next(it))) {
        PyObject *offset = PyObject_GetAttr(t, s_offset);
        int r = offset ? PyDict_SetItem(d->tables, offset, t) : -1;
        Py_XDECREF(offset);
        Py_DECREF(t);
        if (r < 0) break;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 1;
}

static PyObject *decode_units(PyObject *self, PyObject *args) {
    PyObject *image, *tables, *strings, *resolve;
    if (!PyArg_ParseTuple(args, "OOOO:decode_units", &image, &tables, &strings, &resolve)) return NULL;
    if (!M.die) Py_RETURN_NONE;
    decoder d;
    memset(&d, 0, sizeof d);
    PyObject *units = NULL, *applied = NULL;
    PyObject *data = PyObject_GetAttr(image, s_data);
    int r = -1;
    if (!data) goto done;
    if (!PyBytes_Check(data)) { r = 0; goto done; }
    d.data = (const uint8_t *)PyBytes_AS_STRING(data);
    d.size = PyBytes_GET_SIZE(data);
    d.resolve = resolve;
    applied = PyObject_GetAttr(image, s_relocs_applied);
    if (!applied || (d.applied = PyObject_IsTrue(applied)) < 0) goto done;
    if ((r = decoder_relocs(&d, image)) <= 0 || (r = decoder_strings(&d, strings)) <= 0 ||
        (r = decoder_tables(&d, tables)) <= 0)
        goto done;
    units = PyList_New(0);
    if (!units) { r = -1; goto done; }
    Py_ssize_t pos = 0;
    while (pos < d.size) {
        r = decode_unit(&d, pos, units, &pos);
        if (r <= 0) goto done;
    }
    r = 1;
done:
    decoder_free(&d);
    Py_XDECREF(data);
    Py_XDECREF(applied);
    if (r > 0) return units;
    Py_XDECREF(units);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ .debug_loc */

/* A list's begin or end where a relocation is at it: its symbol, or a new one holding ``stored``
 * where the symbol does not (see decode._symbol). */
static PyObject *list_symbol(decoder *d, PyObject *sym, uint64_t stored) {
    PyObject *value = PyObject_GetAttr(sym, s_value);
    if (!value) return NULL;
    PyObject *number = d->applied ? PyLong_FromUnsignedLongLong(stored) : NULL;
    int same = d->applied ? (number ? PyObject_RichCompareBool(value, number, Py_EQ) : -1) : value == Py_None;
    Py_DECREF(value);
    if (same < 0) { Py_XDECREF(number); return NULL; }
    if (same) {
        Py_XDECREF(number);
        Py_INCREF(sym);
        return sym;
    }
    PyObject *name = PyObject_GetAttr(sym, s_name), *addend = name ? PyObject_GetAttr(sym, s_addend) : NULL;
    PyObject *made = addend ? PyObject_CallFunctionObjArgs((PyObject *)M.symbol, name, addend,
                                                           number ? number : Py_None, NULL)
                            : NULL;
    Py_XDECREF(name);
    Py_XDECREF(addend);
    Py_XDECREF(number);
    return made;
}

/* Whether a begin or end reads 0: the number 0, or a symbol of ``unresolved`` whose value is 0. */
static int reads_zero(PyObject *v, PyObject *unresolved) {
    if (PyLong_CheckExact(v)) return PyObject_Not(v);
    if (!Py_IS_TYPE(v, M.symbol)) return 0;
    PyObject *value = PyObject_GetAttr(v, s_value);
    if (!value) return -1;
    PyObject *zero = PyLong_FromLong(0);
    int z = zero ? PyObject_RichCompareBool(value, zero, Py_EQ) : -1;
    Py_XDECREF(zero);
    Py_DECREF(value);
    if (z <= 0) return z;
    PyObject *name = PyObject_GetAttr(v, s_name);
    if (!name) return -1;
    int in = PySequence_Contains(unresolved, name);
    Py_DECREF(name);
    return in;
}

/* The list at *pos onto ``lists``: 1, 0 (the section ends inside it), -1 (error). ``known``: the
 * entries of the model's list, or NULL. */
static int read_list(decoder *d, int address_size, Py_ssize_t *at, PyObject *known, PyObject *unresolved,
                     PyObject *lists) {
    Py_ssize_t pos = *at, start = pos, size = d->size, psize = 2 * address_size;
    uint64_t max_addr = address_size == 8 ? ~(uint64_t)0 : 0xffffffffu;
    PyObject *entries = PyList_New(0), *begin = NULL, *end = NULL, *expr = NULL;
    int result = -1;
    if (!entries) return -1;
    while (1) {
        if (psize > size - pos) { result = 0; goto done; }
        cursor c = cursor_of(d->data, size, pos);
        uint64_t b = cursor_fixed(&c, address_size), e = cursor_fixed(&c, address_size);
        Py_ssize_t rb = d->nrelocs ? reloc_at(d, pos) : -1, re = d->nrelocs ? reloc_at(d, pos + address_size) : -1;
        begin = rb >= 0 ? list_symbol(d, RELOC_ITEM(d, rb, 2), b) : PyLong_FromUnsignedLongLong(b);
        end = begin ? (re >= 0 ? list_symbol(d, RELOC_ITEM(d, re, 2), e) : PyLong_FromUnsignedLongLong(e)) : NULL;
        if (!end) goto done;
        pos += psize;
        if (rb < 0 && re < 0 && b == 0 && e == 0) break;
        if (unresolved) {
            int zero = reads_zero(begin, unresolved);
            if (zero > 0) zero = reads_zero(end, unresolved);
            if (zero < 0) goto done;
            if (zero) break;
        }
        if (rb < 0 && b == max_addr) {
            expr = Py_None;
            Py_INCREF(expr);
        } else {
            if (2 > size - pos) { result = 0; goto done; }
            Py_ssize_t length = d->data[pos] | d->data[pos + 1] << 8, first = pos + 2;
            if (length > size - first) { result = 0; goto done; }
            pos = first + length;
            PyObject *inner = NULL;
            if (d->nrelocs) {
                inner = relocs_in(d, first, pos);
                if (!inner) goto done;
            }
            Py_ssize_t index = PyList_GET_SIZE(entries);
            if (known && (!inner || PyTuple_GET_SIZE(inner) == 0) && index < PyList_GET_SIZE(known)) {
                PyObject *entry = PyList_GET_ITEM(known, index);
                PyObject *old = PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 3 ? PyTuple_GET_ITEM(entry, 2) : NULL;
                if (old && PyBytes_Check(old) && PyBytes_GET_SIZE(old) == length &&
                    memcmp(PyBytes_AS_STRING(old), d->data + first, (size_t)length) == 0) {
                    PyObject *relocs = PyObject_GetAttr(old, s_relocs);
                    int has = relocs ? PyObject_IsTrue(relocs) : -1;
                    Py_XDECREF(relocs);
                    if (has < 0) { Py_XDECREF(inner); goto done; }
                    if (!has) {
                        expr = old;
                        Py_INCREF(expr);
                    }
                }
            }
            if (!expr) {
                if (!inner || PyTuple_GET_SIZE(inner) == 0) {
                    expr = shared_block(d, d->data + first, length);
                } else if ((expr = block_of(d->data + first, length))) {
                    if (PyObject_SetAttr(expr, s_relocs, inner) < 0) Py_CLEAR(expr);
                }
            }
            Py_XDECREF(inner);
            if (!expr) goto done;
        }
        PyObject *entry = PyTuple_Pack(3, begin, end, expr);
        Py_CLEAR(begin);
        Py_CLEAR(end);
        Py_CLEAR(expr);
        if (!entry || PyList_Append(entries, entry) < 0) { Py_XDECREF(entry); goto done; }
        Py_DECREF(entry);
    }
    PyObject *list = PyObject_CallFunction((PyObject *)M.location_list, "nO", start, entries);
    if (!list || PyList_Append(lists, list) < 0) { Py_XDECREF(list); goto done; }
    Py_DECREF(list);
    *at = pos;
    result = 1;
done:
    Py_XDECREF(begin);
    Py_XDECREF(end);
    Py_XDECREF(expr);
    Py_DECREF(entries);
    return result;
}

static PyObject *read_location_lists(PyObject *self, PyObject *args) {
    PyObject *image, *model;
    int address_size;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "OinO:read_location_lists", &image, &address_size, &pos, &model)) return NULL;
    if (!M.location_list || (address_size != 4 && address_size != 8) || pos < 0) Py_RETURN_NONE;
    decoder d;
    memset(&d, 0, sizeof d);
    PyObject *lists = NULL, *applied = NULL, *unresolved = NULL, *known = NULL, *result = NULL;
    PyObject *data = PyObject_GetAttr(image, s_data);
    int r = -1;
    if (!data) goto done;
    if (!PyBytes_Check(data) || (model != Py_None && !PyList_Check(model))) { r = 0; goto done; }
    d.data = (const uint8_t *)PyBytes_AS_STRING(data);
    d.size = PyBytes_GET_SIZE(data);
    applied = PyObject_GetAttr(image, s_relocs_applied);
    if (!applied || (d.applied = PyObject_IsTrue(applied)) < 0) goto done;
    unresolved = PyObject_GetAttr(image, s_unresolved);
    if (!unresolved) goto done;
    int any = PyObject_IsTrue(unresolved);
    if (any < 0) goto done;
    if ((r = decoder_relocs(&d, image)) <= 0) goto done;
    r = -1;
    if (model != Py_None && !(known = PySequence_Tuple(model))) goto done;
    lists = PyList_New(0);
    if (!lists) goto done;
    while (pos < d.size) {
        PyObject *entries = NULL;
        Py_ssize_t index = PyList_GET_SIZE(lists);
        if (known && index < PyTuple_GET_SIZE(known)) {
            entries = PyObject_GetAttr(PyTuple_GET_ITEM(known, index), s_entries);
            if (!entries) goto done;
            if (!PyList_Check(entries)) { Py_DECREF(entries); r = 0; goto done; }
        }
        int got = read_list(&d, address_size, &pos, entries, any ? unresolved : NULL, lists);
        Py_XDECREF(entries);
        if (got < 0) goto done;
        if (got == 0) break;
    }
    result = Py_BuildValue("(On)", lists, pos);
    r = result ? 1 : -1;
done:
    decoder_free(&d);
    Py_XDECREF(data);
    Py_XDECREF(applied);
    Py_XDECREF(unresolved);
    Py_XDECREF(known);
    Py_XDECREF(lists);
    if (r > 0) return result;
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

/* abbrev_entries(data, pos): the twin of ptxdwarf.dwarf.decode.abbrev_entries. A table the
 * section ends inside, or a number past 64 bits, is declined: the reference reads it. */
static PyObject *abbrev_entries(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "y*n:abbrev_entries", &view, &pos)) return NULL;
    PyObject *entries = NULL, *specs = NULL, *result = NULL;
    int overflow = 0;
    cursor c = cursor_of((const uint8_t *)view.buf, view.len, pos);
    if (!(entries = PyList_New(0))) goto done;
    while (1) {
        Py_ssize_t offset = cursor_offset(&c);
        uint64_t code = cursor_uleb(&c, &overflow);
        if (c.bad || overflow) goto declined;
        if (code == 0) break;
        uint64_t tag = cursor_uleb(&c, &overflow);
        uint64_t children = cursor_fixed(&c, 1);
        if (c.bad || overflow) goto declined;
        if (!(specs = PyList_New(0))) goto done;
        while (1) {
            uint64_t name = cursor_uleb(&c, &overflow);
            uint64_t form = cursor_uleb(&c, &overflow);
            if (c.bad || overflow) goto declined;
            if (name == 0 && form == 0) break;
            PyObject *pair = Py_BuildValue("(KK)", (unsigned long long)name, (unsigned long long)form);
            if (!pair || PyList_Append(specs, pair) < 0) { Py_XDECREF(pair); goto done; }
            Py_DECREF(pair);
        }
        PyObject *spec_tuple = PyList_AsTuple(specs);
        Py_CLEAR(specs);
        if (!spec_tuple) goto done;
        PyObject *entry = Py_BuildValue("(nKKKN)", offset, (unsigned long long)code, (unsigned long long)tag,
                                        (unsigned long long)children, spec_tuple);
        if (!entry || PyList_Append(entries, entry) < 0) { Py_XDECREF(entry); goto done; }
        Py_DECREF(entry);
    }
    result = Py_BuildValue("(On)", entries, cursor_offset(&c));
    goto done;
declined:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(specs);
    Py_XDECREF(entries);
    PyBuffer_Release(&view);
    return result;
}

/* die_index(units): the twin of ptxdwarf.dwarf.model.die_index. A unit or DIE of another class,
 * an offset that is not exactly an int or children that are not a list is declined. */
static PyObject *die_index(PyObject *self, PyObject *args) {
    PyObject *units;
    if (!PyArg_ParseTuple(args, "O!:die_index", &PyList_Type, &units)) return NULL;
    if (!M.die || !M.unit) Py_RETURN_NONE;
    PyObject *index = PyDict_New(), *stack = PyList_New(0), *result = NULL, *die_name = NULL;
    if (!index || !stack || !(die_name = PyUnicode_InternFromString("die"))) goto done;
    for (Py_ssize_t u = 0; u < PyList_GET_SIZE(units); u++) {
        PyObject *unit = PyList_GET_ITEM(units, u);
        if (!Py_IS_TYPE(unit, M.unit)) goto declined;
        PyObject *root = PyObject_GetAttr(unit, die_name);
        if (!root) goto done;
        int r = root == Py_None ? 0 : PyList_Append(stack, root);
        Py_DECREF(root);
        if (r < 0) goto done;
        while (PyList_GET_SIZE(stack) > 0) {
            Py_ssize_t n = PyList_GET_SIZE(stack);
            PyObject *die = Py_NewRef(PyList_GET_ITEM(stack, n - 1));
            if (PyList_SetSlice(stack, n - 1, n, NULL) < 0) { Py_DECREF(die); goto done; }
            PyObject *offset = Py_IS_TYPE(die, M.die) ? SLOT(die, M.die_offset) : NULL;
            PyObject *children = offset ? SLOT(die, M.die_children) : NULL;
            if (!offset || !children || !PyLong_CheckExact(offset) || !PyList_CheckExact(children)) {
                Py_DECREF(die);
                goto declined;
            }
            int overflow;
            long long at = PyLong_AsLongLongAndOverflow(offset, &overflow);
            if (at == -1 && !overflow && PyErr_Occurred()) { Py_DECREF(die); goto done; }
            r = overflow < 0 || (!overflow && at < 0) ? 0 : PyDict_SetItem(index, offset, die);
            for (Py_ssize_t i = PyList_GET_SIZE(children) - 1; i >= 0 && r == 0; i--)
                r = PyList_Append(stack, PyList_GET_ITEM(children, i));
            Py_DECREF(die);
            if (r < 0) goto done;
        }
    }
    result = Py_NewRef(index);
    goto done;
declined:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(index);
    Py_XDECREF(stack);
    Py_XDECREF(die_name);
    return result;
}

static PyMethodDef methods[] = {
    {"die_index", die_index, METH_VARARGS, "die_index(units): the DIEs of the units by offset, or None."},
    {"abbrev_entries", abbrev_entries, METH_VARARGS,
     "abbrev_entries(data, pos): the declarations of the abbreviation table at pos and where it ends, or None."},
    {"model", model, METH_VARARGS,
     "model(DIE, Attribute, Unit, Block, Reloc, Symbol, LocationList, Resolver): the classes decode_units "
     "builds and the resolver it looks labels up in."},
    {"decode_units", decode_units, METH_VARARGS,
     "decode_units(image, tables, strings, resolve): the units of .debug_info, or None."},
    {"read_location_lists", read_location_lists, METH_VARARGS,
     "read_location_lists(image, address_size, pos, model): the lists of .debug_loc from pos and where they stop, "
     "or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "decode", .m_doc = "The .debug_info DIE decoder.", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit_decode(void) {
    struct { PyObject **name; const char *text; } names[] = {
        {&s_data, "data"}, {&s_relocs, "relocs"}, {&s_relocs_applied, "relocs_applied"}, {&s_offset, "offset"},
        {&s_decls, "decls"}, {&s_code, "code"}, {&s_tag, "tag"}, {&s_has_children, "has_children"},
        {&s_specs, "specs"}, {&s_name, "name"}, {&s_addend, "addend"}, {&s_tail, "tail"},
        {&s_open_scopes, "open_scopes"}, {&s_die, "die"}, {&s_offsets, "offsets"}, {&s_strings, "strings"},
        {&s_size, "size"}, {&s_surrogateescape, "surrogateescape"}, {&s_value, "value"},
        {&s_unresolved, "unresolved"}, {&s_entries, "entries"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].name && !(*names[i].name = PyUnicode_InternFromString(names[i].text))) return NULL;
    if (!empty_tuple && !(empty_tuple = PyTuple_New(0))) return NULL;
    return PyModule_Create(&module);
}
