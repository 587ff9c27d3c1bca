/* platform_json.c: the JSON platform format of docs/PLATFORMS.md,
 *
 *   {"nodes": [{"name": "Ps", "speed": "2"}, {"name": "R", "router": true}],
 *    "links": [{"from": "Ps", "to": "R", "cost": "2/3", "both": true}]}
 *
 * read with jansson and written back with exact numbers as strings.  Every
 * number goes through trd_rational_parse as text: strings as they are,
 * JSON integers printed back, JSON reals through the shortest decimal that
 * gives the same double.  That decimal is the one in the file whenever the
 * file's number has at most 15 significant digits (DBL_DIG); a real that
 * needs more is refused, because jansson keeps only the double and its
 * exact decimal value is lost. */
#include <errno.h>
#include <float.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "platform/platform_io.h"

/* Fails naming the first key of obj that is not in allowed (NULL-ended). */
static trd_status check_keys(json_t *obj, const char *const *allowed, const char *where)
{
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value) {
        size_t i = 0;
        while (allowed[i] && strcmp(key, allowed[i]) != 0)
            i++;
        if (allowed[i] == NULL) {
            char list[128] = "";
            for (i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"",
                         i ? ", " : "", allowed[i]);
            return trd_fail(TRD_EINVAL, "%s: unknown key \"%s\" (expected %s)", where, key,
                            list);
        }
    }
    return TRD_OK;
}

/* The shortest decimal (at most DBL_DIG digits) that reads back as x. */
static bool shortest_decimal(double x, char *buf, size_t size)
{
    for (int digits = 1; digits <= DBL_DIG; digits++) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            return true;
    }
    return false;
}

/* The number text of a JSON value (string, integer or real) into buf, or
 * NULL with the failure in *st. */
static const char *number_text(json_t *value, char *buf, size_t size, const char *field,
                               trd_status *st)
{
    *st = TRD_OK;
    if (json_is_string(value))
        return json_string_value(value);
    if (json_is_integer(value)) {
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(value));
        return buf;
    }
    if (json_is_real(value) && shortest_decimal(json_real_value(value), buf, size))
        return buf;
    if (json_is_real(value))
        *st = trd_fail(TRD_EINVAL, "%s: the JSON number %.17g has more than %d significant "
                       "digits and is not exact: write it as a string", field,
                       json_real_value(value), DBL_DIG);
    else
        *st = trd_fail(TRD_EINVAL, "%s: must be a number or a string such as \"2/3\"", field);
    return NULL;
}

/* The number of field `field` of `where`, exactly. */
static trd_status read_number(json_t *value, const char *where, const char *field, mpq_t out)
{
    char buf[64];
    trd_status st;
    const char *text = number_text(value, buf, sizeof buf, field, &st);
    if (text != NULL)
        st = trd_rational_parse(text, field, out);
    return st == TRD_OK ? st : trd_fail_within(st, where);
}

/* The string field `field` of obj (required). */
static trd_status read_name(json_t *obj, const char *field, const char *where,
                            const char **name)
{
    json_t *value = json_object_get(obj, field);
    *name = json_string_value(value);
    if (*name == NULL)
        return trd_fail(TRD_EINVAL, "%s: \"%s\" %s", where, field,
                        value ? "must be a string" : "is missing");
    return TRD_OK;
}

/* Optional boolean field; false when absent. */
static trd_status read_flag(json_t *obj, const char *field, const char *where, bool *flag)
{
    json_t *value = json_object_get(obj, field);
    if (value != NULL && !json_is_boolean(value))
        return trd_fail(TRD_EINVAL, "%s: \"%s\" must be true or false", where, field);
    *flag = json_is_true(value);
    return TRD_OK;
}

static trd_status read_node(trd_platform *pf, const char *path, size_t index, json_t *node)
{
    static const char *const keys[] = {"name", "speed", "router", "cores", NULL};
    char where[512];
    const char *name;
    bool router = false;
    snprintf(where, sizeof where, "%s: nodes[%zu]", path, index);
    if (!json_is_object(node))
        return trd_fail(TRD_EINVAL, "%s: must be an object {\"name\": ..., \"speed\": ...}",
                        where);
    trd_status st = check_keys(node, keys, where);
    if (st == TRD_OK)
        st = read_name(node, "name", where, &name);
    if (st == TRD_OK)
        st = read_flag(node, "router", where, &router);
    if (st != TRD_OK)
        return st;
    snprintf(where, sizeof where, "%s: nodes[%zu] '%s'", path, index, name);
    json_t *speed = json_object_get(node, "speed");
    if (router && speed != NULL)
        return trd_fail(TRD_EINVAL, "%s: a router computes nothing and has no \"speed\"", where);
    mpq_t value; /* no speed: a node of scatters and gossips, which compute nothing */
    mpq_init(value);
    st = router || !speed ? TRD_OK : read_number(speed, where, "speed", value);
    int32_t id = -1;
    if (st == TRD_OK && (st = trd_platform_add_node(pf, name, router, speed ? value : NULL,
                                                    &id)) != TRD_OK)
        st = trd_fail_within(st, where);
    mpq_clear(value);
    json_t *cores = json_object_get(node, "cores");
    if (st == TRD_OK && cores && !json_is_integer(cores))
        st = trd_fail(TRD_EINVAL, "%s: \"cores\" must be an integer", where);
    if (st == TRD_OK && cores &&
        (st = trd_platform_set_cores(pf, id, json_integer_value(cores))) != TRD_OK)
        st = trd_fail_within(st, where);
    return st;
}

/* The index of the node named by field `field` of link. */
static trd_status read_end(const trd_platform *pf, json_t *link, const char *field,
                           const char *where, int32_t *id)
{
    const char *name;
    trd_status st = read_name(link, field, where, &name);
    if (st != TRD_OK)
        return st;
    *id = trd_platform_find(pf, name);
    if (*id < 0)
        return trd_fail(TRD_EINVAL, "%s: \"%s\": unknown node '%s'", where, field, name);
    return TRD_OK;
}

static trd_status read_link(trd_platform *pf, const char *path, size_t index, json_t *link)
{
    static const char *const keys[] = {"from", "to", "cost", "both", NULL};
    char where[512];
    int32_t from = -1, to = -1;
    bool both = false;
    snprintf(where, sizeof where, "%s: links[%zu]", path, index);
    if (!json_is_object(link))
        return trd_fail(TRD_EINVAL, "%s: must be an object {\"from\": ..., \"to\": ..., "
                        "\"cost\": ...}", where);
    trd_status st = check_keys(link, keys, where);
    if (st == TRD_OK)
        st = read_end(pf, link, "from", where, &from);
    if (st == TRD_OK)
        st = read_end(pf, link, "to", where, &to);
    if (st == TRD_OK)
        st = read_flag(link, "both", where, &both);
    if (st != TRD_OK)
        return st;
    snprintf(where, sizeof where, "%s: links[%zu] (%s -> %s)", path, index,
             pf->nodes[from].name, pf->nodes[to].name);
    json_t *cost = json_object_get(link, "cost");
    if (cost == NULL)
        return trd_fail(TRD_EINVAL, "%s: \"cost\" (time per unit of message) is missing", where);
    mpq_t value;
    mpq_init(value);
    st = read_number(cost, where, "cost", value);
    if (st == TRD_OK)
        st = trd_platform_add_links(pf, from, to, value, both, where);
    mpq_clear(value);
    return st;
}

/* The array `field` of the top level: "nodes" is required and non-empty,
 * "links" may be left out (one node, or nodes that never talk). */
static trd_status read_array(json_t *root, const char *field, bool required, const char *path,
                             json_t **array)
{
    *array = json_object_get(root, field);
    if (*array == NULL && !required)
        return TRD_OK;
    if (!json_is_array(*array))
        return trd_fail(TRD_EINVAL, "%s: \"%s\" %s", path, field,
                        *array ? "must be an array" : "is missing");
    if (required && json_array_size(*array) == 0)
        return trd_fail(TRD_EINVAL, "%s: \"%s\" is empty", path, field);
    return TRD_OK;
}

static trd_status read_platform(json_t *root, const char *path, trd_platform *pf)
{
    static const char *const keys[] = {"nodes", "links", "comment", NULL};
    json_t *nodes, *links, *item;
    size_t i;
    if (!json_is_object(root))
        return trd_fail(TRD_EINVAL, "%s: the top level must be an object {\"nodes\": [...], "
                        "\"links\": [...]}", path);
    trd_status st = check_keys(root, keys, path);
    if (st == TRD_OK && json_object_get(root, "comment") &&
        !json_is_string(json_object_get(root, "comment")))
        st = trd_fail(TRD_EINVAL, "%s: \"comment\" must be a string", path);
    if (st == TRD_OK)
        st = read_array(root, "nodes", true, path, &nodes);
    if (st == TRD_OK)
        st = read_array(root, "links", false, path, &links);
    if (st != TRD_OK)
        return st;
    json_array_foreach(nodes, i, item)
        if ((st = read_node(pf, path, i, item)) != TRD_OK)
            return st;
    json_array_foreach(links, i, item)
        if ((st = read_link(pf, path, i, item)) != TRD_OK)
            return st;
    return TRD_OK;
}

trd_status trd_platform_parse_json(const char *text, size_t len, const char *path,
                                   trd_platform **out)
{
    json_error_t error;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &error);
    if (root == NULL)
        return trd_fail(TRD_EINVAL, "%s:%d:%d: malformed JSON: %s", path, error.line,
                        error.column, error.text);
    trd_platform *pf = NULL;
    trd_status st = trd_platform_create(&pf);
    if (st == TRD_OK)
        st = read_platform(root, path, pf);
    json_decref(root);
    if (st != TRD_OK) {
        trd_platform_free(pf);
        return st;
    }
    *out = pf;
    return TRD_OK;
}

trd_status trd_platform_load_json(const char *path, trd_platform **out)
{
    return trd_platform_load_with(path, trd_platform_parse_json, out);
}

static json_t *node_json(const trd_pnode *node)
{
    if (node->router)
        return json_pack("{s:s, s:b}", "name", node->name, "router", 1);
    json_t *obj = json_pack("{s:s}", "name", node->name);
    char *speed = mpq_sgn(node->speed) != 0 ? trd_rational_text(node->speed) : NULL;
    if (obj && speed) /* else the file gave none */
        json_object_set_new(obj, "speed", json_string(speed));
    if (obj && node->cores > 1)
        json_object_set_new(obj, "cores", json_integer(node->cores));
    bool lost = mpq_sgn(node->speed) != 0 && !speed;
    free(speed);
    if (lost) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* Whether link i and link i + 1 are one link both ways (written "both"). */
static bool pair_at(const trd_platform *pf, int32_t i)
{
    if (i + 1 >= pf->n_links)
        return false;
    const trd_plink *a = &pf->links[i], *b = &pf->links[i + 1];
    return a->from == b->to && a->to == b->from && mpq_equal(a->cost, b->cost);
}

static json_t *link_json(const trd_platform *pf, int32_t i, bool both)
{
    const trd_plink *link = &pf->links[i];
    char *cost = trd_rational_text(link->cost);
    json_t *obj = cost ? json_pack("{s:s, s:s, s:s}", "from", pf->nodes[link->from].name, "to",
                                   pf->nodes[link->to].name, "cost", cost)
                       : NULL;
    if (obj && both)
        json_object_set_new(obj, "both", json_true());
    free(cost);
    return obj;
}

/* Prints obj as one indented line (a comma after it unless last) and frees
 * it; false when obj is NULL or cannot be printed. */
static bool emit(FILE *out, json_t *obj, bool last)
{
    char *text = obj ? json_dumps(obj, 0) : NULL;
    json_decref(obj);
    if (text == NULL)
        return false;
    fprintf(out, "    %s%s\n", text, last ? "" : ",");
    free(text);
    return true;
}

trd_status trd_platform_write_json(const trd_platform *pf, FILE *out)
{
    if (pf == NULL || out == NULL)
        return trd_fail(TRD_EINVAL, "trd_platform_write_json: NULL platform or file");
    bool ok = true;
    fputs("{\n  \"nodes\": [\n", out);
    for (int32_t i = 0; i < pf->n_nodes; i++)
        ok &= emit(out, node_json(&pf->nodes[i]), i + 1 == pf->n_nodes);
    fputs("  ],\n  \"links\": [\n", out);
    for (int32_t i = 0, next; i < pf->n_links; i = next) {
        bool both = pair_at(pf, i);
        next = i + (both ? 2 : 1);
        ok &= emit(out, link_json(pf, i, both), next == pf->n_links);
    }
    fputs("  ]\n}\n", out);
    if (!ok) /* names are UTF-8 from every loader, so only memory can fail */
        return trd_fail(TRD_ENOMEM, "no memory to write the platform as JSON");
    if (fflush(out) != 0 || ferror(out))
        return trd_fail(TRD_EIO, "cannot write the platform: %s", strerror(errno));
    return TRD_OK;
}
