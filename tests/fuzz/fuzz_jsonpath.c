/*
 * libFuzzer target for the templates of `gpupool get -o jsonpath=...|custom-columns=...`
 * (cli/jsonpath.h, cli/columns.h): any bytes, as a template and as a column spec, compile or are
 * refused with a message naming the position; what compiles runs over a fixed document, and its
 * canonical text compiles again to a template with the same text and the same output.
 */
#include "cli/columns.h"
#include "cli/jsonpath.h"
#include "tests/fuzz/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char doc_text[] =
    "{\"items\": [{\"name\": \"a\", \"n\": 1, \"x\": [1, 2.5, null, true], \"o\": {\"k\": \"v\"}},"
    " {\"name\": \"b\", \"o\": {}}, 7, \"s\"], \"name\": \"top\"}";

static void check_template(const char *text, const json_t *doc)
{
    gp_jsonpath *p, *q;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_jsonpath_compile(text, &p, &d) != 0) {
        if (d.code == GP_EINVAL && strncmp(d.msg, "position ", 9) != 0) {
            abort();
        }
        return;
    }
    char *canon = gp_jsonpath_format(p), *out1 = NULL, *out2 = NULL;
    if (!canon || gp_jsonpath_compile(canon, &q, &d) != 0) {
        abort();
    }
    char *canon2 = gp_jsonpath_format(q);
    if (!canon2 || strcmp(canon, canon2) != 0) {
        abort();
    }
    int r1 = gp_jsonpath_run(p, doc, &out1, &d), r2 = gp_jsonpath_run(q, doc, &out2, &d);
    if (r1 != r2 || (r1 == 0 && strcmp(out1, out2) != 0)) {
        abort();
    }
    free(out1);
    free(out2);
    free(canon);
    free(canon2);
    gp_jsonpath_free(p);
    gp_jsonpath_free(q);
}

static void check_columns(const char *text, const json_t *doc)
{
    gp_columns *c, *c2;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_columns_parse(text, &c, &d) != 0) {
        if (d.code == GP_EINVAL && strncmp(d.msg, "column ", 7) != 0 &&
            strncmp(d.msg, "no columns", 10) != 0) {
            abort();
        }
        return;
    }
    char *canon = gp_columns_format(c);
    if (!canon || gp_columns_parse(canon, &c2, &d) != 0) {
        abort();
    }
    char *canon2 = gp_columns_format(c2);
    if (!canon2 || strcmp(canon, canon2) != 0 || gp_columns_count(c) != gp_columns_count(c2)) {
        abort();
    }
    for (int i = 0; i < gp_columns_count(c); i++) {
        char *a = gp_columns_cell(c, i, doc), *b = gp_columns_cell(c2, i, doc);
        if (!a || !b || strcmp(a, b) != 0 ||
            strcmp(gp_columns_header(c, i), gp_columns_header(c2, i)) != 0) {
            abort();
        }
        free(a);
        free(b);
    }
    free(canon);
    free(canon2);
    gp_columns_free(c);
    gp_columns_free(c2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static json_t *doc;
    if (!doc) {
        doc = json_loads(doc_text, 0, NULL);
    }
    char *text = fuzz_text(data, size);
    if (!text) {
        return 0;
    }
    check_template(text, doc);
    check_columns(text, doc);
    free(text);
    return 0;
}
