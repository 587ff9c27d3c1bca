/* layout.c: what a testbed of a platform is made of, computed
 * before anything is built (docs/TESTBED.md):
 *   - one namespace per platform node, "trd-NAME.I" for node I, and
 *     "trd-NAME.m" for the management network where mpirun runs;
 *   - one veth pair per pair of nodes joined by a platform link (either
 *     way), each direction shaped to its link's rate: a message of size m
 *     crosses a link of cost c in m * c time units (Legrand et al. Sec. 2),
 *     so the rate is unit_bytes / (c * time_unit) bytes per second;
 *   - addresses in 198.18.0.0/15: node I's management address
 *     198.19.0.(I+1), its own address 198.19.1.(I+1) (what MPI uses), the
 *     ends of link K 198.18.0.0 + 2K and + 1 (a /31 each);
 *   - routes: from every node to every node's own address, along the fewest
 *     hops (as SimGrid routes a Floyd or Dijkstra zone; a SimGrid file's
 *     declared routes are one link each once loaded, docs/PLATFORMS.md, so
 *     they are followed as declared), ties broken by the smallest sum of
 *     link costs, then by the smallest node index.  Routing by destination
 *     only, so two routes that meet follow one path on (and share links). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testbed_internal.h"

bool tb_name_ok(const tb_report *r, const char *name)
{
    size_t n = strlen(name);
    bool ok = n >= 1 && n <= TB_NAME_MAX && name[0] != '-';
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
             name[i] == '-';
    if (!ok)
        tb_say(r, TB_SAY_ERROR, TB_REFUSED, "invalid testbed name '%s': 1 to %d characters "
               "of a-z, 0-9 and '-', not starting with '-'", name, TB_NAME_MAX);
    return ok;
}

void tb_ns_name(const tb_layout *t, int32_t node, char *buf)
{
    if (node < 0)
        snprintf(buf, 64, "trd-%s.m", t->name);
    else
        snprintf(buf, 64, "trd-%s.%d", t->name, (int)node);
}

void tb_mgmt_addr(int32_t node, char *buf)
{
    snprintf(buf, 64, "198.19.0.%d", node < 0 ? 254 : (int)node + 1);
}

void tb_host_addr(int32_t node, char *buf)
{
    snprintf(buf, 64, "198.19.1.%d", (int)node + 1);
}

void tb_link_addr(const tb_layout *t, int32_t k, int32_t node, char *buf)
{
    int32_t v = 2 * k + (node == t->links[k].b); /* 198.18.0.0/16 holds 32768 /31s */
    snprintf(buf, 64, "198.18.%d.%d", (int)(v >> 8), (int)(v & 255));
}

void tb_ifname(int32_t v, char *buf)
{
    snprintf(buf, 64, "n%d", (int)v);
}

bool tb_layout_index(tb_layout *t)
{
    size_t n = (size_t)t->n_nodes;
    free(t->pair);
    if (!(t->pair = malloc(n * n * sizeof *t->pair)))
        return false;
    for (size_t i = 0; i < n * n; i++)
        t->pair[i] = -1;
    for (int32_t k = 0; k < t->n_links; k++)
        t->pair[(size_t)t->links[k].a * n + (size_t)t->links[k].b] =
            t->pair[(size_t)t->links[k].b * n + (size_t)t->links[k].a] = k;
    return true;
}

int32_t tb_link_between(const tb_layout *t, int32_t u, int32_t v)
{
    return t->pair[(size_t)u * (size_t)t->n_nodes + (size_t)v];
}

double tb_hop_rate(const tb_layout *t, int32_t u, int32_t v)
{
    int32_t k = tb_link_between(t, u, v);
    return k < 0 ? 0.0 : t->links[k].rate[u > v];
}

int32_t tb_route_hops(const tb_layout *t, int32_t u, int32_t d)
{
    int32_t hops = 0;
    for (int32_t at = u; at != d; at = t->next[at * t->n_nodes + d], hops++)
        if (at < 0 || hops > t->n_nodes)
            return -1;
    return hops;
}

double tb_route_rate(const tb_layout *t, int32_t u, int32_t d)
{
    if (tb_route_hops(t, u, d) < 0)
        return 0.0;
    double rate = INFINITY;
    for (int32_t at = u; at != d; at = t->next[at * t->n_nodes + d]) {
        double r = tb_hop_rate(t, at, t->next[at * t->n_nodes + d]);
        rate = r < rate ? r : rate;
    }
    return rate;
}

void tb_layout_free(tb_layout *t)
{
    for (int32_t i = 0; t->nodes && i < t->n_nodes; i++)
        free(t->nodes[i].name);
    free(t->nodes);
    free(t->links);
    free(t->next);
    free(t->pair);
    free(t->platform);
    memset(t, 0, sizeof *t);
}

/* The exact cost "p" or "p/q" as a double. */
static double cost_value(const char *text)
{
    const char *slash = strchr(text, '/');
    double p = strtod(text, NULL), q = slash ? strtod(slash + 1, NULL) : 1.0;
    return p / q;
}

/* The directed link `l` of pf into t's veth pairs (added as needed). */
static tb_status add_link(const tb_report *r, const trd_platform *pf, int32_t l, tb_layout *t)
{
    int32_t u = trd_platform_link_from(pf, l), v = trd_platform_link_to(pf, l);
    char *text = NULL;
    if (trd_platform_link_cost(pf, l, &text) != TRD_OK)
        return tb_say_lib(r, TRD_EINVAL);
    double rate = round(8.0 * t->unit_bytes / (cost_value(text) * t->time_unit)); /* tc's */
    if (!(rate >= TB_RATE_MIN && rate <= TB_RATE_MAX)) {
        tb_say(r, TB_SAY_ERROR, TB_REFUSED, "link %s -> %s: cost %s gives %.6g bit/s with "
               "--unit-bytes %g and --time-unit %g; a testbed emulates %g to %g bit/s",
               t->nodes[u].name, t->nodes[v].name, text, rate, t->unit_bytes, t->time_unit,
               TB_RATE_MIN, TB_RATE_MAX);
        free(text);
        return TB_REFUSED;
    }
    free(text);
    int32_t k = tb_link_between(t, u, v);
    if (k < 0) {
        k = t->n_links++;
        t->links[k] = (tb_link){.a = u < v ? u : v, .b = u < v ? v : u};
        t->pair[u * t->n_nodes + v] = t->pair[v * t->n_nodes + u] = k;
    }
    t->links[k].rate[u > v] = rate;
    return TB_OK;
}

/* Routes to d: a breadth-first search backwards from d over the directed
 * hops gives each node its fewest hops to d; within those, the cheapest
 * (sum of 1/rate, which is the sum of the platform's costs up to a
 * constant factor), then the smallest index. */
static void routes_to(tb_layout *t, int32_t d, int32_t *hops, double *cost, int32_t *queue)
{
    int32_t n = t->n_nodes, head = 0, tail = 0;
    for (int32_t u = 0; u < n; u++) {
        hops[u] = -1;
        t->next[u * n + d] = -1;
    }
    hops[d] = 0;
    cost[d] = 0.0;
    t->next[d * n + d] = d;
    queue[tail++] = d;
    while (head < tail) { /* layer by layer: a node's cost is final when dequeued */
        int32_t v = queue[head++];
        for (int32_t u = 0; u < n; u++) {
            double r = tb_hop_rate(t, u, v);
            if (r <= 0 || (hops[u] >= 0 && hops[u] <= hops[v]))
                continue;
            double c = cost[v] + 1.0 / r;
            if (hops[u] < 0) {
                hops[u] = hops[v] + 1;
                queue[tail++] = u;
            } else if (c > cost[u] * (1 + 1e-12) ||
                       (!(c < cost[u] * (1 - 1e-12)) && v > t->next[u * n + d]))
                continue; /* dearer, or as dear through a larger index */
            cost[u] = c;
            t->next[u * n + d] = v;
        }
    }
}

static tb_status make_routes(const tb_report *r, tb_layout *t)
{
    int32_t n = t->n_nodes;
    int32_t *hops = malloc((size_t)n * sizeof *hops), *queue = malloc((size_t)n * sizeof *queue);
    double *cost = malloc((size_t)n * sizeof *cost);
    t->next = malloc((size_t)n * (size_t)n * sizeof *t->next);
    bool ok = hops && queue && cost && t->next;
    for (int32_t d = 0; ok && d < n; d++)
        routes_to(t, d, hops, cost, queue);
    free(hops);
    free(queue);
    free(cost);
    return ok ? TB_OK : tb_say(r, TB_SAY_ERROR, TB_FAILED, "out of memory");
}

/* Every host must reach every other: MPI may connect any two ranks. */
static tb_status check_connected(const tb_report *r, const tb_layout *t)
{
    for (int32_t u = 0; u < t->n_nodes; u++)
        for (int32_t v = 0; v < t->n_nodes; v++)
            if (!t->nodes[u].router && !t->nodes[v].router && t->next[u * t->n_nodes + v] < 0)
                return tb_say(r, TB_SAY_ERROR, TB_REFUSED, "host '%s' cannot reach host '%s' "
                              "over the platform's links: every host of a testbed must reach "
                              "every other", t->nodes[u].name, t->nodes[v].name);
    return TB_OK;
}

static tb_status check_size(const tb_report *r, const trd_platform *pf, const char *path)
{
    int32_t n = trd_platform_node_count(pf), hosts = 0;
    for (int32_t i = 0; i < n; i++)
        hosts += !trd_platform_node_is_router(pf, i);
    if (n > TB_NODES_MAX)
        return tb_say(r, TB_SAY_USAGE, TB_REFUSED, "%s has %d nodes: a testbed has at most %d "
                      "(one address per node in a /24)", path, (int)n, TB_NODES_MAX);
    if (hosts == 0)
        return tb_say(r, TB_SAY_USAGE, TB_REFUSED, "%s has no computing node: nothing to run "
                      "on", path);
    return TB_OK;
}

tb_status tb_layout_make(const tb_report *r, const trd_platform *pf, const char *path,
                         const char *name, double unit_bytes, double time_unit, tb_layout *t)
{
    memset(t, 0, sizeof *t);
    tb_status rc = check_size(r, pf, path);
    if (rc != TB_OK)
        return rc;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->unit_bytes = unit_bytes;
    t->time_unit = time_unit;
    t->n_nodes = trd_platform_node_count(pf);
    int32_t nl = trd_platform_link_count(pf);
    t->platform = realpath(path, NULL);
    t->nodes = calloc((size_t)t->n_nodes, sizeof *t->nodes);
    t->links = calloc((size_t)nl + 1, sizeof *t->links);
    rc = t->platform && t->nodes && t->links && tb_layout_index(t) ? TB_OK : TB_FAILED;
    for (int32_t i = 0; rc == TB_OK && i < t->n_nodes; i++) {
        t->nodes[i].router = trd_platform_node_is_router(pf, i);
        t->nodes[i].cores = trd_platform_node_cores(pf, i);
        t->n_hosts += !t->nodes[i].router;
        t->n_cores += t->nodes[i].cores;
        if (!(t->nodes[i].name = strdup(trd_platform_node_name(pf, i))))
            rc = TB_FAILED;
    }
    if (rc != TB_OK)
        tb_say(r, TB_SAY_ERROR, rc, "out of memory");
    for (int32_t l = 0; rc == TB_OK && l < nl; l++)
        rc = add_link(r, pf, l, t);
    if (rc == TB_OK)
        rc = make_routes(r, t);
    if (rc == TB_OK)
        rc = check_connected(r, t);
    if (rc != TB_OK)
        tb_layout_free(t);
    return rc;
}
