/* state.c: a testbed's layout saved as JSON in its state folder
 * (TB_STATE_ROOT/NAME/state.json), so that `show`, `run` and `down` see
 * what `up` made even if the platform file changed since; the files of
 * that folder written whole; and `show`. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testbed_internal.h"

void tb_state_dir(const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", TB_STATE_ROOT, name);
}

static json_t *layout_json(const tb_layout *t)
{
    json_t *nodes = json_array(), *links = json_array(), *next = json_array();
    for (int32_t i = 0; i < t->n_nodes; i++) {
        json_array_append_new(nodes, json_pack("{s:s, s:b, s:i}", "name", t->nodes[i].name,
                                               "router", t->nodes[i].router, "cores",
                                               (int)t->nodes[i].cores));
        json_t *row = json_array();
        for (int32_t d = 0; d < t->n_nodes; d++)
            json_array_append_new(row, json_integer(t->next[i * t->n_nodes + d]));
        json_array_append_new(next, row);
    }
    for (int32_t k = 0; k < t->n_links; k++)
        json_array_append_new(links, json_pack("{s:i, s:i, s:f, s:f}", "a", t->links[k].a, "b",
                                               t->links[k].b, "rate_ab", t->links[k].rate[0],
                                               "rate_ba", t->links[k].rate[1]));
    return json_pack("{s:i, s:s, s:s, s:f, s:f, s:b, s:o, s:o, s:o}", "treduce_testbed", 1,
                     "name", t->name, "platform", t->platform, "unit_bytes", t->unit_bytes,
                     "time_unit", t->time_unit, "complete", t->complete, "nodes", nodes,
                     "links", links, "next", next);
}

bool tb_make_dir(const tb_report *r, const char *dir)
{
    struct stat sb;
    if (mkdir(dir, 0777) == 0 || (errno == EEXIST && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)))
        return true;
    tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot create folder %s: %s", dir,
           errno == EEXIST ? "a file has that name" : strerror(errno));
    return false;
}

FILE *tb_file_open(const tb_report *r, tb_file *o, const char *dir, const char *name)
{
    *o = (tb_file){.f = NULL};
    int len = snprintf(o->path, sizeof o->path, "%s/%s", dir, name);
    int tlen = snprintf(o->tmp, sizeof o->tmp, "%s/.%s.tmp-%ld", dir, name, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof o->path || tlen < 0 || (size_t)tlen >= sizeof o->tmp) {
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot write %s/%s: the path is too long", dir,
               name);
        return NULL;
    }
    if (!(o->f = fopen(o->tmp, "w")))
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot write %s: %s", o->path, strerror(errno));
    return o->f;
}

bool tb_file_close(const tb_report *r, tb_file *o, bool ok)
{
    bool written = !ferror(o->f);
    if ((fclose(o->f) != 0 || !written) && ok) {
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot write %s: %s", o->path, strerror(errno));
        ok = false;
    }
    o->f = NULL;
    if (ok && rename(o->tmp, o->path) != 0) {
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot write %s: %s", o->path, strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(o->tmp);
    return ok;
}

tb_status tb_state_save(const tb_report *r, const tb_layout *t)
{
    char dir[512];
    tb_file out;
    tb_state_dir(t->name, dir, sizeof dir);
    json_t *j = layout_json(t);
    FILE *f = j ? tb_file_open(r, &out, dir, "state.json") : NULL;
    if (!j)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "out of memory for the state of %s", t->name);
    bool ok = f && json_dumpf(j, f, JSON_COMPACT) == 0;
    if (f && !ok)
        tb_say(r, TB_SAY_ERROR, TB_FAILED, "cannot write %s", out.path);
    json_decref(j);
    return f && tb_file_close(r, &out, ok) ? TB_OK : TB_FAILED;
}

/* Reads the nodes, links and routes of j into t (checked against each
 * other: a state file is ours, but it may be cut short). */
static bool read_layout(json_t *j, tb_layout *t)
{
    json_t *nodes = json_object_get(j, "nodes"), *links = json_object_get(j, "links"),
           *next = json_object_get(j, "next"), *v;
    size_t i, n = json_array_size(nodes);
    if (n < 1 || n > TB_NODES_MAX || json_array_size(next) != n)
        return false;
    t->n_nodes = (int32_t)n;
    t->n_links = (int32_t)json_array_size(links);
    t->nodes = calloc(n, sizeof *t->nodes);
    t->links = calloc((size_t)t->n_links + 1, sizeof *t->links);
    t->next = malloc(n * n * sizeof *t->next);
    if (!t->nodes || !t->links || !t->next)
        return false;
    json_array_foreach(nodes, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        if (!name || !(t->nodes[i].name = strdup(name)))
            return false;
        t->nodes[i].router = json_is_true(json_object_get(v, "router"));
        json_t *c = json_object_get(v, "cores"); /* none: a state saved before cores */
        json_int_t cores = c ? json_integer_value(c) : !t->nodes[i].router;
        if (t->nodes[i].router ? cores != 0 : cores < 1 || cores > TRD_PLATFORM_CORES_MAX)
            return false;
        t->nodes[i].cores = (int32_t)cores;
        t->n_hosts += !t->nodes[i].router;
        t->n_cores += cores;
    }
    json_array_foreach(links, i, v) {
        tb_link *l = &t->links[i];
        l->a = (int32_t)json_integer_value(json_object_get(v, "a"));
        l->b = (int32_t)json_integer_value(json_object_get(v, "b"));
        l->rate[0] = json_number_value(json_object_get(v, "rate_ab"));
        l->rate[1] = json_number_value(json_object_get(v, "rate_ba"));
        if (l->a < 0 || l->a >= l->b || l->b >= t->n_nodes)
            return false;
    }
    json_array_foreach(next, i, v) {
        if (json_array_size(v) != n)
            return false;
        for (size_t d = 0; d < n; d++)
            t->next[i * n + d] = (int32_t)json_integer_value(json_array_get(v, d));
    }
    return tb_layout_index(t);
}

tb_status tb_load(const tb_report *r, const char *name, tb_layout *t)
{
    memset(t, 0, sizeof *t);
    if (!tb_name_ok(r, name))
        return TB_REFUSED;
    char path[600];
    tb_state_dir(name, path, sizeof path);
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, "/state.json");
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j)
        return tb_say(r, TB_SAY_ERROR, TB_REFUSED, "no testbed named '%s' (%s: %s); make one "
                      "with 'treduce testbed up'", name, path,
                      errno == ENOENT ? "no such file" : err.text);
    snprintf(t->name, sizeof t->name, "%s", name);
    const char *platform = json_string_value(json_object_get(j, "platform"));
    t->platform = platform ? strdup(platform) : NULL;
    t->unit_bytes = json_number_value(json_object_get(j, "unit_bytes"));
    t->time_unit = json_number_value(json_object_get(j, "time_unit"));
    t->complete = json_is_true(json_object_get(j, "complete"));
    bool ok = t->platform && read_layout(j, t);
    json_decref(j);
    if (!ok) {
        tb_layout_free(t);
        return tb_say(r, TB_SAY_ERROR, TB_FAILED, "%s is not a testbed's state: remove the "
                      "testbed with 'treduce testbed down --name %s'", path, name);
    }
    return TB_OK;
}

/* "12.5 Mbit/s", or "-" for no link. */
static const char *rate_text(double bps, char *buf)
{
    if (bps <= 0)
        return "-";
    const char *unit = bps >= 1e9 ? "Gbit/s" : bps >= 1e6 ? "Mbit/s" : "kbit/s";
    double scale = bps >= 1e9 ? 1e9 : bps >= 1e6 ? 1e6 : 1e3;
    snprintf(buf, 64, "%.4g %s", bps / scale, unit);
    return buf;
}

static json_t *route_json(const tb_layout *t, int32_t u, int32_t d)
{
    json_t *path = json_array();
    for (int32_t at = u; json_array_append_new(path, json_string(t->nodes[at].name)) == 0 &&
                         at != d;)
        at = t->next[at * t->n_nodes + d];
    return json_pack("{s:s, s:s, s:i, s:f, s:o}", "from", t->nodes[u].name, "to",
                     t->nodes[d].name, "hops", tb_route_hops(t, u, d), "rate_bps",
                     tb_route_rate(t, u, d), "path", path);
}

static void show_json(const tb_layout *t, FILE *out)
{
    json_t *nodes = json_array(), *links = json_array(), *routes = json_array();
    char ns[64], addr[64], mgmt[64], ifa[64], ifb[64], aa[64], ab[64];
    for (int32_t i = 0; i < t->n_nodes; i++) {
        tb_ns_name(t, i, ns);
        tb_host_addr(i, addr);
        tb_mgmt_addr(i, mgmt);
        json_array_append_new(nodes, json_pack("{s:i, s:s, s:b, s:i, s:s, s:s, s:s}", "index",
                                               i, "name", t->nodes[i].name, "router",
                                               t->nodes[i].router, "cores",
                                               (int)t->nodes[i].cores, "namespace", ns,
                                               "address", addr, "management", mgmt));
    }
    for (int32_t k = 0; k < t->n_links; k++) {
        const tb_link *l = &t->links[k];
        tb_ifname(l->b, ifa);
        tb_ifname(l->a, ifb);
        tb_link_addr(t, k, l->a, aa);
        tb_link_addr(t, k, l->b, ab);
        for (int s = 0; s < 2; s++)
            if (l->rate[s] > 0)
                json_array_append_new(
                    links, json_pack("{s:s, s:s, s:f, s:s, s:s}", "from",
                                     t->nodes[s ? l->b : l->a].name, "to",
                                     t->nodes[s ? l->a : l->b].name, "rate_bps", l->rate[s],
                                     "interface", s ? ifb : ifa, "address", s ? ab : aa));
    }
    for (int32_t u = 0; u < t->n_nodes; u++)
        for (int32_t d = 0; d < t->n_nodes; d++)
            if (u != d && !t->nodes[u].router && !t->nodes[d].router)
                json_array_append_new(routes, route_json(t, u, d));
    json_t *j = json_pack("{s:s, s:s, s:b, s:f, s:f, s:i, s:I, s:i, s:s, s:s, s:o, s:o, s:o}",
                          "name", t->name, "platform", t->platform, "complete", t->complete,
                          "unit_bytes", t->unit_bytes, "time_unit", t->time_unit, "hosts",
                          t->n_hosts, "cores", (json_int_t)t->n_cores, "routers",
                          t->n_nodes - t->n_hosts, "management",
                          TB_MGMT_NET, "host_network", TB_HOST_NET, "nodes", nodes, "links",
                          links, "routes", routes);
    json_dumpf(j, out, JSON_INDENT(2));
    fputc('\n', out);
    json_decref(j);
}

static void show_routes(const tb_layout *t, FILE *out)
{
    char r[64];
    fprintf(out, "routes between hosts (hops, bottleneck rate, path):\n");
    for (int32_t u = 0; u < t->n_nodes; u++)
        for (int32_t d = 0; d < t->n_nodes; d++) {
            if (u == d || t->nodes[u].router || t->nodes[d].router)
                continue;
            fprintf(out, "  %s -> %s: %d, %s,", t->nodes[u].name, t->nodes[d].name,
                    (int)tb_route_hops(t, u, d), rate_text(tb_route_rate(t, u, d), r));
            for (int32_t at = u; fprintf(out, " %s", t->nodes[at].name) > 0 && at != d;)
                at = t->next[at * t->n_nodes + d];
            fputc('\n', out);
        }
}

void tb_write(const tb_layout *t, bool json, FILE *out)
{
    if (json) {
        show_json(t, out);
        return;
    }
    char ns[64], addr[64], mgmt[64], r0[64], r1[64], aa[64];
    fprintf(out, "testbed %s%s: %d hosts (%lld cores), %d routers, %d links, from %s\n",
            t->name, t->complete ? "" : " (INCOMPLETE: 'treduce testbed down' removes it)",
            (int)t->n_hosts, (long long)t->n_cores, (int)(t->n_nodes - t->n_hosts),
            (int)t->n_links, t->platform);
    fprintf(out, "  1 unit of message size = %g bytes, 1 time unit = %g s; no latency "
            "emulated\n", t->unit_bytes, t->time_unit);
    tb_ns_name(t, -1, ns);
    tb_mgmt_addr(-1, mgmt);
    fprintf(out, "  management network %s: mpirun in %s at %s\n", TB_MGMT_NET, ns, mgmt);
    fprintf(out, "nodes (index, name, kind and cores, namespace, address, management "
            "address):\n");
    for (int32_t i = 0; i < t->n_nodes; i++) {
        tb_ns_name(t, i, ns);
        tb_host_addr(i, addr);
        tb_mgmt_addr(i, mgmt);
        char kind[32];
        snprintf(kind, sizeof kind, t->nodes[i].router ? "router" : "host x%d",
                 (int)t->nodes[i].cores);
        fprintf(out, "  %3d  %-12s %-10s  %-22s %-14s %s\n", (int)i, t->nodes[i].name, kind,
                ns, addr, mgmt);
    }
    fprintf(out, "links (a <-> b: rate a -> b, rate b -> a, address of a's end /31):\n");
    for (int32_t k = 0; k < t->n_links; k++) {
        const tb_link *l = &t->links[k];
        tb_link_addr(t, k, l->a, aa);
        fprintf(out, "  %s <-> %s: %s, %s, %s\n", t->nodes[l->a].name, t->nodes[l->b].name,
                rate_text(l->rate[0], r0), rate_text(l->rate[1], r1), aa);
    }
    show_routes(t, out);
}
