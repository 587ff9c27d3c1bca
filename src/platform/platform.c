/* platform.c: the platform graph of Legrand, Marchal and Robert (Sec. 2):
 * building it node by node and link by link with every check the loaders
 * and the generator rely on, the accessors of include/treduce/platform.h,
 * and trd_platform_load, which picks the loader from the file's content.
 * Nodes are found by name and links by their ends through hash indexes,
 * so that a file of n nodes and links loads in O(n). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "platform/platform_io.h"

trd_status trd_platform_create(trd_platform **out)
{
    if (out == NULL)
        return trd_fail(TRD_EINVAL, "trd_platform_create: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? TRD_OK : trd_fail(TRD_ENOMEM, "no memory for a platform");
}

void trd_platform_free(trd_platform *pf)
{
    if (pf == NULL)
        return;
    for (int32_t i = 0; i < pf->n_nodes; i++) {
        free(pf->nodes[i].name);
        mpq_clear(pf->nodes[i].speed);
    }
    for (int32_t i = 0; i < pf->n_links; i++)
        mpq_clear(pf->links[i].cost);
    free(pf->nodes);
    free(pf->links);
    trd_index_free(&pf->by_name);
    trd_index_free(&pf->by_ends);
    free(pf);
}

/* Makes room for one more element in *array (count used of *cap). */
static trd_status reserve(void **array, int32_t count, int32_t *cap, size_t elem_size,
                          const char *what)
{
    if (count < *cap)
        return TRD_OK;
    if (*cap > INT32_MAX / 2)
        return trd_fail(TRD_ENOMEM, "too many %s (%d)", what, (int)count);
    int32_t grown = *cap ? 2 * *cap : 8;
    void *bigger = realloc(*array, (size_t)grown * elem_size);
    if (bigger == NULL)
        return trd_fail(TRD_ENOMEM, "no memory for %d %s", (int)grown, what);
    *array = bigger;
    *cap = grown;
    return TRD_OK;
}

trd_status trd_platform_add_node(trd_platform *pf, const char *name, bool router,
                                 const mpq_t speed, int32_t *id)
{
    if (name == NULL || *name == '\0')
        return trd_fail(TRD_EINVAL, "a node has an empty name");
    if (trd_platform_find(pf, name) >= 0)
        return trd_fail(TRD_EINVAL, "node name '%s' is used twice", name);
    if (!router && speed && mpq_sgn(speed) <= 0)
        return trd_fail(TRD_EINVAL, "speed of node '%s' must be > 0 (a node that computes "
                        "nothing is a router)", name);
    trd_status st = reserve((void **)&pf->nodes, pf->n_nodes, &pf->cap_nodes,
                            sizeof *pf->nodes, "nodes");
    if (st != TRD_OK)
        return st;
    char *copy = strdup(name);
    if (copy == NULL)
        return trd_fail(TRD_ENOMEM, "no memory for node name '%s'", name);
    if ((st = trd_index_add(&pf->by_name, trd_hash_text(name), pf->n_nodes, "nodes")) != TRD_OK) {
        free(copy);
        return st;
    }
    trd_pnode *node = &pf->nodes[pf->n_nodes];
    node->name = copy;
    node->router = router;
    node->cores = router ? 0 : 1;
    mpq_init(node->speed);
    if (!router && speed)
        mpq_set(node->speed, speed);
    if (id != NULL)
        *id = pf->n_nodes;
    pf->n_nodes++;
    return TRD_OK;
}

trd_status trd_platform_set_cores(trd_platform *pf, int32_t node, int64_t cores)
{
    const trd_pnode *n = &pf->nodes[node];
    if (n->router)
        return trd_fail(TRD_EINVAL, "router '%s' has no cores: it runs no rank", n->name);
    if (cores < 1 || cores > TRD_PLATFORM_CORES_MAX)
        return trd_fail(TRD_EINVAL, "cores of node '%s' must be 1 to %d, not %lld", n->name,
                        TRD_PLATFORM_CORES_MAX, (long long)cores);
    pf->nodes[node].cores = (int32_t)cores;
    return TRD_OK;
}

trd_status trd_platform_add_link(trd_platform *pf, int32_t from, int32_t to, const mpq_t cost)
{
    if (from < 0 || from >= pf->n_nodes || to < 0 || to >= pf->n_nodes)
        return trd_fail(TRD_EINVAL, "link %d -> %d: no such node (the platform has %d)",
                        (int)from, (int)to, (int)pf->n_nodes);
    const char *a = pf->nodes[from].name, *b = pf->nodes[to].name;
    if (from == to)
        return trd_fail(TRD_EINVAL, "link %s -> %s goes nowhere (from = to)", a, b);
    if (mpq_sgn(cost) <= 0)
        return trd_fail(TRD_EINVAL, "cost of link %s -> %s must be > 0", a, b);
    if (trd_platform_link(pf, from, to) >= 0)
        return trd_fail(TRD_EINVAL, "link %s -> %s is given twice", a, b);
    trd_status st = reserve((void **)&pf->links, pf->n_links, &pf->cap_links,
                            sizeof *pf->links, "links");
    if (st == TRD_OK)
        st = trd_index_add(&pf->by_ends, trd_hash_pair(from, to), pf->n_links, "links");
    if (st != TRD_OK)
        return st;
    trd_plink *link = &pf->links[pf->n_links++];
    link->from = from;
    link->to = to;
    mpq_init(link->cost);
    mpq_set(link->cost, cost);
    return TRD_OK;
}

trd_status trd_platform_add_links(trd_platform *pf, int32_t from, int32_t to, const mpq_t cost,
                                  bool both, const char *where)
{
    trd_status st = trd_platform_add_link(pf, from, to, cost);
    if (st == TRD_OK && both)
        st = trd_platform_add_link(pf, to, from, cost);
    return st == TRD_OK || where == NULL ? st : trd_fail_within(st, where);
}

typedef struct ends_key {
    const trd_platform *pf;
    int32_t from, to;
} ends_key;

static bool same_ends(const void *ctx, int32_t id)
{
    const ends_key *k = ctx;
    return k->pf->links[id].from == k->from && k->pf->links[id].to == k->to;
}

int32_t trd_platform_link(const trd_platform *pf, int32_t from, int32_t to)
{
    ends_key k = {pf, from, to};
    return trd_index_find(&pf->by_ends, trd_hash_pair(from, to), same_ends, &k);
}

typedef struct name_key {
    const trd_platform *pf;
    const char *name;
} name_key;

static bool same_name(const void *ctx, int32_t id)
{
    const name_key *k = ctx;
    return strcmp(k->pf->nodes[id].name, k->name) == 0;
}

int32_t trd_platform_find(const trd_platform *pf, const char *name)
{
    name_key k = {pf, name};
    return name ? trd_index_find(&pf->by_name, trd_hash_text(name), same_name, &k) : -1;
}

int32_t trd_platform_node_count(const trd_platform *pf)
{
    return pf->n_nodes;
}

int32_t trd_platform_link_count(const trd_platform *pf)
{
    return pf->n_links;
}

const char *trd_platform_node_name(const trd_platform *pf, int32_t node)
{
    return node >= 0 && node < pf->n_nodes ? pf->nodes[node].name : NULL;
}

int trd_platform_node_is_router(const trd_platform *pf, int32_t node)
{
    return node >= 0 && node < pf->n_nodes && pf->nodes[node].router;
}

int32_t trd_platform_node_cores(const trd_platform *pf, int32_t node)
{
    return node >= 0 && node < pf->n_nodes ? pf->nodes[node].cores : 0;
}

int32_t trd_platform_link_from(const trd_platform *pf, int32_t link)
{
    return link >= 0 && link < pf->n_links ? pf->links[link].from : -1;
}

int32_t trd_platform_link_to(const trd_platform *pf, int32_t link)
{
    return link >= 0 && link < pf->n_links ? pf->links[link].to : -1;
}

static trd_status exact_text(const mpq_t q, char **text)
{
    *text = trd_rational_text(q);
    return *text ? TRD_OK : trd_fail(TRD_ENOMEM, "no memory to print a number");
}

trd_status trd_platform_node_speed(const trd_platform *pf, int32_t node, char **text)
{
    if (node < 0 || node >= pf->n_nodes)
        return trd_fail(TRD_EINVAL, "node %d: out of range (%d nodes)", (int)node,
                        (int)pf->n_nodes);
    return exact_text(pf->nodes[node].speed, text);
}

trd_status trd_platform_link_cost(const trd_platform *pf, int32_t link, char **text)
{
    if (link < 0 || link >= pf->n_links)
        return trd_fail(TRD_EINVAL, "link %d: out of range (%d links)", (int)link,
                        (int)pf->n_links);
    return exact_text(pf->links[link].cost, text);
}

trd_status trd_fail_within(trd_status st, const char *where)
{
    char reason[1024]; /* trd_errmsg() is overwritten by the new message */
    snprintf(reason, sizeof reason, "%s", trd_errmsg());
    return trd_fail(st, "%s: %s", where, reason);
}

/* Appends the rest of f to *text (of *len bytes, room for *cap). */
static trd_status read_all(FILE *f, const char *path, char **text, size_t *len, size_t *cap)
{
    for (;;) {
        if (*cap - *len < 2) {
            size_t grown = *cap ? 2 * *cap : 4096;
            char *bigger = grown < (size_t)INT32_MAX ? realloc(*text, grown) : NULL;
            if (bigger == NULL)
                return trd_fail(TRD_ENOMEM, "%s: cannot hold the file in memory (%zu bytes "
                                "read)", path, *len);
            *text = bigger;
            *cap = grown;
        }
        size_t n = fread(*text + *len, 1, *cap - *len - 1, f);
        *len += n;
        (*text)[*len] = '\0';
        if (n == 0)
            return ferror(f) ? trd_fail(TRD_EIO, "%s: cannot read: %s", path, strerror(errno))
                             : TRD_OK;
    }
}

trd_status trd_read_file(const char *path, char **text, size_t *len)
{
    struct stat sb;
    size_t cap = 0;
    *text = NULL;
    *len = 0;
    if (path == NULL)
        return trd_fail(TRD_EINVAL, "platform file name is NULL");
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return trd_fail(TRD_EIO, "%s: cannot read: %s", path, strerror(errno));
    trd_status st = fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)
                        ? trd_fail(TRD_EIO, "%s: cannot read: is a folder", path)
                        : read_all(f, path, text, len, &cap);
    fclose(f);
    if (st != TRD_OK) {
        free(*text);
        *text = NULL;
    }
    return st;
}

/* Either format, chosen by content: XML starts with '<' (declaration,
 * comment or element), which JSON cannot. */
static trd_status parse_any(const char *text, size_t len, const char *path, trd_platform **out)
{
    size_t blank = strspn(text, " \t\r\n");
    return text[blank] == '<' ? trd_platform_parse_simgrid(text, len, path, out)
                              : trd_platform_parse_json(text, len, path, out);
}

/* Both formats are UTF-8 text: a UTF-16 or UTF-32 file (a byte-order mark,
 * or NUL bytes) would otherwise be called malformed JSON.  A UTF-8
 * byte-order mark is skipped (*skip). */
static trd_status check_encoding(const char *text, size_t len, const char *path, size_t *skip)
{
    const unsigned char *u = (const unsigned char *)text;
    *skip = len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF ? 3 : 0;
    const char *kind = len >= 4 && ((u[0] == 0xFF && u[1] == 0xFE && !u[2] && !u[3]) ||
                                    (!u[0] && !u[1] && u[2] == 0xFE && u[3] == 0xFF))
                           ? "UTF-32"
                       : len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF))
                           ? "UTF-16"
                       : memchr(text, '\0', len) ? "not text (it holds NUL bytes: UTF-16 "
                                                    "or UTF-32 without a byte-order mark?)"
                                                  : NULL;
    if (!kind)
        return TRD_OK;
    return trd_fail(TRD_EINVAL, "%s: the file is %s: platform files are UTF-8 text (JSON or "
                    "SimGrid XML); convert it, e.g. iconv -t UTF-8", path, kind);
}

trd_status trd_platform_load_with(const char *path, trd_platform_parser parse,
                                  trd_platform **out)
{
    if (out == NULL)
        return trd_fail(TRD_EINVAL, "loading a platform: out is NULL");
    *out = NULL;
    char *text;
    size_t len, skip = 0;
    trd_status st = trd_read_file(path, &text, &len);
    if (st == TRD_OK)
        st = check_encoding(text, len, path, &skip);
    if (st == TRD_OK)
        st = parse(text + skip, len - skip, path, out);
    free(text);
    return st;
}

trd_status trd_platform_load(const char *path, trd_platform **out)
{
    return trd_platform_load_with(path, parse_any, out);
}
