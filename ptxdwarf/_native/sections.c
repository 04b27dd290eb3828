/* The section-text lexer: the twin of ptxdwarf.ptx.sections.bulk_pieces. It reads a section
 * body written one directive a line (".bN ", then a number, a .b8 list of numbers, or on
 * .b32/.b64 one symbol) and gives its bytes, its symbolic values (offsets, sizes, texts and
 * the distinct texts) and where its wide .b64 numbers are; any other body gives None. */
#include "common.h"

/* The ASCII characters str.strip() removes. */
static int is_strip_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

static int is_blank(uint8_t c) { return c == ' ' || c == '\t'; }

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static int is_alpha(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

static int is_word(uint8_t c) { return is_digit(c) || is_alpha(c); }

/* The n characters at p are .b8, .b16, .b32 or .b64. */
static int is_directive(const uint8_t *p, Py_ssize_t n) {
    return (n == 3 && memcmp(p, ".b8", 3) == 0) ||
           (n == 4 && (memcmp(p, ".b16", 4) == 0 || memcmp(p, ".b32", 4) == 0 || memcmp(p, ".b64", 4) == 0));
}

/* A plain decimal ("0" or no leading zero) of at most max; 0 when it is not one. */
static int read_decimal(const uint8_t *p, const uint8_t *end, uint64_t max, uint64_t *value) {
    if (p == end || (*p == '0' && end - p > 1)) return 0;
    uint64_t v = 0;
    for (; p < end; p++) {
        if (!is_digit(*p)) return 0;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (max - d) / 10) return 0;
        v = v * 10 + d;
    }
    *value = v;
    return 1;
}

/* A symbol the bulk reader takes: a section name that is not a directive, or an identifier
 * (one of _ $ % starts one of two characters or more), and at most a "+N" of up to ten
 * digits. */
static int is_bulk_symbol(const uint8_t *p, const uint8_t *end) {
    const uint8_t *q = p;
    if (q < end && *q == '.') {
        q++;
        if (q == end || !is_alpha(*q)) return 0;
        while (q < end && (is_word(*q) || *q == '$' || *q == '.')) q++;
        if (is_directive(p, q - p)) return 0;
    } else {
        if (q == end || !(is_alpha(*q) || *q == '$' || *q == '%')) return 0;
        int letter = *q != '_' && *q != '$' && *q != '%';
        q++;
        while (q < end && (is_word(*q) || *q == '$')) q++;
        if (!letter && q - p < 2) return 0;
    }
    if (q == end) return 1;
    if (*q != '+') return 0;
    q++;
    Py_ssize_t digits = end - q;
    if (digits < 1 || digits > 10 || (*q == '0' && digits > 1)) return 0;
    for (; q < end; q++)
        if (!is_digit(*q)) return 0;
    return 1;
}

typedef struct {
    buffer data, sizes;
    PyObject *offsets, *texts, *distinct, *wide;
} pieces;

static int append_int(PyObject *list, size_t value) {
    PyObject *v = PyLong_FromSize_t(value);
    if (!v) return -1;
    int r = PyList_Append(list, v);
    Py_DECREF(v);
    return r;
}

static int put_le(buffer *b, uint64_t v, int width) {
    uint8_t bytes[8];
    for (int i = 0; i < width; i++) bytes[i] = (uint8_t)(v >> (8 * i));
    return buffer_put(b, bytes, (size_t)width);
}

/* One line without its blanks; 1 read, 0 not a line the bulk reader takes, -1 a Python error. */
static int read_line(pieces *out, const uint8_t *p, const uint8_t *end) {
    int width;
    if (end - p >= 4 && memcmp(p, ".b8 ", 4) == 0) {
        width = 1;
        p += 4;
    } else if (end - p >= 5 && p[0] == '.' && p[1] == 'b' && p[4] == ' ') {
        if (p[2] == '1' && p[3] == '6') width = 2;
        else if (p[2] == '3' && p[3] == '2') width = 4;
        else if (p[2] == '6' && p[3] == '4') width = 8;
        else return 0;
        p += 5;
    } else {
        return 0;
    }
    if (p == end) return 0;
    if (width == 1) {
        while (1) {
            const uint8_t *comma = memchr(p, ',', (size_t)(end - p));
            const uint8_t *stop = comma ? comma : end;
            uint64_t v;
            if (!read_decimal(p, stop, 255, &v)) return 0;
            if (buffer_byte(&out->data, (uint8_t)v) < 0) return -1;
            if (!comma) return 1;
            p = comma + 1;
        }
    }
    size_t offset = out->data.len;
    uint64_t v;
    if (is_digit(*p)) {
        uint64_t max = width == 8 ? UINT64_MAX : (((uint64_t)1 << (8 * width)) - 1);
        if (!read_decimal(p, end, max, &v)) return 0;
        if (width == 8 && v >> 32 && append_int(out->wide, offset) < 0) return -1;
    } else {
        if (width == 2 || !is_bulk_symbol(p, end)) return 0;
        PyObject *text = PyUnicode_FromStringAndSize((const char *)p, end - p);
        if (!text) return -1;
        int r = PyDict_SetDefault(out->distinct, text, Py_None) ? PyList_Append(out->texts, text) : -1;
        Py_DECREF(text);
        if (r < 0 || append_int(out->offsets, offset) < 0 || buffer_byte(&out->sizes, (uint8_t)width) < 0) return -1;
        v = 0;
    }
    return put_le(&out->data, v, width) < 0 ? -1 : 1;
}

/* 1 read, 0 not a body the bulk reader takes, -1 a Python error. */
static int read_body(pieces *out, const uint8_t *s, Py_ssize_t n) {
    const uint8_t *p = s, *end = s + n;
    while (p < end && is_strip_space(*p)) p++;
    while (end > p && is_strip_space(end[-1])) end--;
    if (p == end) return 0;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *stop = nl ? nl : end;
        const uint8_t *a = p, *b = stop;
        while (a < b && is_blank(*a)) a++;
        while (b > a && is_blank(b[-1])) b--;
        int r = read_line(out, a, b);
        if (r <= 0) return r;
        p = nl ? nl + 1 : end;
    }
    return 1;
}

static PyObject *bulk_pieces(PyObject *self, PyObject *body) {
    if (!PyUnicode_Check(body) || !PyUnicode_IS_ASCII(body)) Py_RETURN_NONE;
    pieces out = {{NULL, 0, 0}, {NULL, 0, 0}, PyList_New(0), PyList_New(0), PyDict_New(), PyList_New(0)};
    PyObject *result = NULL;
    if (out.offsets && out.texts && out.distinct && out.wide) {
        int r = read_body(&out, PyUnicode_1BYTE_DATA(body), PyUnicode_GET_LENGTH(body));
        if (r > 0) {
            PyObject *data = buffer_bytes(&out.data);
            PyObject *sizes = buffer_bytes(&out.sizes);
            if (data && sizes) result = PyTuple_Pack(6, data, out.offsets, sizes, out.texts, out.distinct, out.wide);
            Py_XDECREF(data);
            Py_XDECREF(sizes);
        } else if (r == 0) {
            result = Py_NewRef(Py_None);
        }
    }
    buffer_free(&out.data);
    buffer_free(&out.sizes);
    Py_XDECREF(out.offsets);
    Py_XDECREF(out.texts);
    Py_XDECREF(out.distinct);
    Py_XDECREF(out.wide);
    return result;
}

/* The Symbol of one text of the bulk reader, "name" or "name+N" (N: up to ten digits);
 * NULL with no error set for any other text. */
static PyObject *symbol_of(PyTypeObject *symbol_type, const symbol_fields *fields, PyObject *text) {
    if (!PyUnicode_Check(text) || !PyUnicode_IS_ASCII(text)) return NULL;
    const uint8_t *p = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), plus = 0;
    while (plus < n && p[plus] != '+') plus++;
    PyObject *name, *addend;
    if (plus == n) {
        name = Py_NewRef(text);
        addend = PyLong_FromLong(0);
    } else {
        uint64_t v;
        if (plus == 0 || n - plus - 1 > 10 || !read_decimal(p + plus + 1, p + n, 9999999999ULL, &v)) return NULL;
        name = PyUnicode_Substring(text, 0, plus);
        addend = PyLong_FromUnsignedLongLong(v);
    }
    PyObject *made = new_symbol(symbol_type, fields, name, addend, Py_NewRef(Py_None));
    if (!made && !PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "no symbol made");
    return made;
}

/* bulk_relocs(symbol, reloc, offsets, sizes, texts, distinct): the twin of
 * ptxdwarf.ptx.sections.bulk_relocs. A Symbol holds a string and ints and a Reloc two ints
 * and a Symbol: neither can be in a cycle, and both are left untracked by the collector. */
static PyObject *bulk_relocs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    /* Both types must be classes defined in Python (whose deallocators untrack with the
     * checking call) without a __dict__; reloc a tuple of three. */
    if (nargs != 6 || !PyType_Check(args[0]) || !PyType_Check(args[1])) Py_RETURN_NONE;
    PyTypeObject *symbol_type = (PyTypeObject *)args[0], *reloc_type = (PyTypeObject *)args[1];
    if (!PyType_HasFeature(symbol_type, Py_TPFLAGS_HEAPTYPE) || symbol_type->tp_dictoffset != 0 ||
        !PyType_HasFeature(reloc_type, Py_TPFLAGS_HEAPTYPE) || reloc_type->tp_dictoffset != 0 ||
        !PyType_IsSubtype(reloc_type, &PyTuple_Type) || !PyList_CheckExact(args[2]) || !PyBytes_CheckExact(args[3]) ||
        !PyList_CheckExact(args[4]) || !PyDict_CheckExact(args[5]))
        Py_RETURN_NONE;
    PyObject *offsets = args[2], *texts = args[4], *distinct = args[5];
    Py_ssize_t n = PyList_GET_SIZE(offsets);
    if (PyBytes_GET_SIZE(args[3]) != n || PyList_GET_SIZE(texts) != n) Py_RETURN_NONE;
    const uint8_t *sizes = (const uint8_t *)PyBytes_AS_STRING(args[3]);
    symbol_fields fields;
    if (symbol_fields_of(symbol_type, &fields) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *symbols = PyDict_New(), *out = NULL, *small[9] = {NULL};
    if (!symbols) return NULL;
    Py_ssize_t pos = 0;
    PyObject *text, *ignored;
    while (PyDict_Next(distinct, &pos, &text, &ignored)) {
        PyObject *made = symbol_of(symbol_type, &fields, text);
        if (!made) goto done;
        int r = PyDict_SetItem(symbols, text, made);
        Py_DECREF(made);
        if (r < 0) goto done;
    }
    out = PyList_New(n);
    if (!out) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t size = sizes[i];
        PyObject *symbol = PyDict_GetItemWithError(symbols, PyList_GET_ITEM(texts, i));
        if (!symbol || size > 8) { Py_CLEAR(out); goto done; }
        if (!small[size] && !(small[size] = PyLong_FromLong(size))) { Py_CLEAR(out); goto done; }
        PyObject *r = reloc_type->tp_alloc(reloc_type, 3);
        if (!r) { Py_CLEAR(out); goto done; }
        PyTuple_SET_ITEM(r, 0, Py_NewRef(PyList_GET_ITEM(offsets, i)));
        PyTuple_SET_ITEM(r, 1, Py_NewRef(small[size]));
        PyTuple_SET_ITEM(r, 2, Py_NewRef(symbol));
        if (PyObject_GC_IsTracked(r)) PyObject_GC_UnTrack(r);
        PyList_SET_ITEM(out, i, r);
    }
done:
    for (int k = 0; k < 9; k++) Py_XDECREF(small[k]);
    Py_DECREF(symbols);
    if (!out && !PyErr_Occurred()) Py_RETURN_NONE;
    return out;
}

static PyMethodDef methods[] = {
    {"bulk_pieces", bulk_pieces, METH_O, "The twin of ptxdwarf.ptx.sections.bulk_pieces."},
    {"bulk_relocs", (PyCFunction)(void (*)(void))bulk_relocs, METH_FASTCALL,
     "The twin of ptxdwarf.ptx.sections.bulk_relocs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "sections", NULL, 0, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_sections(void) { return PyModule_Create(&module); }
