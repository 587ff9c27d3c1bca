/* platform_simgrid.c: imports a SimGrid platform file (XML, version 4)
 * into the graph of Legrand et al. (Sec. 2).  docs/PLATFORMS.md has the
 * full mapping; in short:
 *
 *   <host id speed core pstate>  a computing node; speed in tasks/s with
 *                                1 task = 1 Gflop (speed * core / 1e9)
 *   <router id>                  a router
 *   <link id bandwidth latency>  no node: a cost of 1e6 / bandwidth
 *                                seconds per message of 1 MB (10^6 bytes)
 *   <route src dst> + link_ctn   the directed link src -> dst (and dst ->
 *                                src unless symmetrical="NO"), its cost
 *                                the largest of its links' (the
 *                                bottleneck bounds a stream's rate)
 *   <zoneRoute gw_src gw_dst>    the same between the two gateways
 *   <zone>/<AS>                  walked into, nested or not
 *
 * Latency is read and checked but left out: it delays each message once
 * and does not bound the throughput of a series of operations, which is
 * all the steady-state model measures.  Anything else that would change
 * the platform (clusters, traces, zones without explicit routes), an
 * attribute treduce does not read and a <platform> without version 4.x
 * are refused naming the element and its line. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "platform/platform_io.h"
#include "platform/platform_simgrid.h"

typedef struct sg_link {
    const char *id; /* points into the document */
    mpq_t cost;     /* seconds per MB */
} sg_link;

typedef struct reader {
    const char *path;
    trd_platform *pf;
    sg_link *links;
    size_t n_links, cap_links;
    trd_index by_id; /* links by id */
} reader;

typedef trd_status (*element_fn)(reader *r, xmlNode *el);
typedef struct handler {
    const char *name;
    element_fn take; /* NULL: allowed and ignored (properties, disks, config) */
    const char *const *attrs; /* the attributes it may have (NULL-ended) */
} handler;

static trd_status need_attr(const reader *r, const xmlNode *el, const char *name,
                            const char **value)
{
    char where[512];
    *value = trd_sg_attr(el, name);
    if (*value != NULL)
        return TRD_OK;
    trd_sg_describe(r->path, el, where, sizeof where);
    return trd_fail(TRD_EINVAL, "%s: attribute '%s' is missing", where, name);
}

/* Runs the handler of each element child of el; an element with no
 * handler is refused, naming it. */
static trd_status walk_children(reader *r, xmlNode *el, const handler *handlers)
{
    for (xmlNode *c = el->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        const handler *h = handlers;
        while (h->name && !xmlStrEqual(c->name, BAD_CAST h->name))
            h++;
        if (h->name == NULL) {
            char where[512];
            trd_sg_describe(r->path, c, where, sizeof where);
            return trd_fail(TRD_EINVAL, "%s: not supported inside <%s> (treduce reads hosts, "
                            "routers, links, routes and zones: docs/PLATFORMS.md)", where,
                            (const char *)el->name);
        }
        trd_status st = trd_sg_check_attrs(r->path, c, h->attrs);
        if (st == TRD_OK && h->take)
            st = h->take(r, c);
        if (st != TRD_OK)
            return st;
    }
    return TRD_OK;
}

static const handler ignored_props[] = {{"prop", NULL, NULL}, {NULL, NULL, NULL}};
static const handler host_children[] = {
    {"prop", NULL, NULL}, {"disk", NULL, NULL}, {NULL, NULL, NULL}};

/* The entry number `pstate` of a comma-separated list of speeds. */
static trd_status pstate_speed(const char *list, long pstate, const char *what, mpq_t speed)
{
    const char *start = list;
    for (long i = 0; i < pstate && start; i++)
        start = strchr(start, ',') ? strchr(start, ',') + 1 : NULL;
    if (start == NULL)
        return trd_fail(TRD_EINVAL, "%s: no pstate %ld in '%.64s'", what, pstate, list);
    char entry[128];
    size_t len = strcspn(start, ","); /* SimGrid trims blanks around each entry */
    while (len > 0 && (*start == ' ' || *start == '\t'))
        start++, len--;
    while (len > 0 && (start[len - 1] == ' ' || start[len - 1] == '\t'))
        len--;
    if (len >= sizeof entry)
        return trd_fail(TRD_EINVAL, "invalid %s '%.64s...': too long", what, start);
    snprintf(entry, sizeof entry, "%.*s", (int)len, start);
    return trd_simgrid_quantity(entry, TRD_SG_SPEED, what, speed);
}

/* A whole number >= lowest from an optional attribute (fallback if absent). */
static trd_status count_attr(const char *text, long fallback, long lowest, const char *what,
                             long *out)
{
    char *end;
    *out = text ? strtol(text, &end, 10) : fallback;
    if (text && (*text == '\0' || *end != '\0' || *out < lowest || *out > 1000000))
        return trd_fail(TRD_EINVAL, "invalid %s '%.32s': need a whole number from %ld to "
                        "1000000", what, text, lowest);
    return TRD_OK;
}

/* speed (pstate entry, times its cores) in tasks of 1 Gflop per second */
static trd_status host_speed(const xmlNode *el, const char *text, mpq_t speed, long *cores)
{
    long pstate;
    trd_status st = count_attr(trd_sg_attr(el, "core"), 1, 1, "core", cores);
    if (st == TRD_OK)
        st = count_attr(trd_sg_attr(el, "pstate"), 0, 0, "pstate", &pstate);
    if (st == TRD_OK)
        st = pstate_speed(text, pstate, "speed", speed);
    if (st == TRD_OK) {
        mpz_mul_ui(mpq_numref(speed), mpq_numref(speed), (unsigned long)*cores);
        mpz_mul_ui(mpq_denref(speed), mpq_denref(speed), 1000000000UL);
        mpq_canonicalize(speed);
    }
    return st;
}

static trd_status take_host(reader *r, xmlNode *el)
{
    char where[512];
    const char *id, *speed_text;
    trd_status st = need_attr(r, el, "id", &id);
    if (st == TRD_OK)
        st = need_attr(r, el, "speed", &speed_text);
    if (st == TRD_OK)
        st = walk_children(r, el, host_children);
    if (st != TRD_OK)
        return st;
    mpq_t speed;
    mpq_init(speed);
    long cores = 1;
    int32_t node = -1;
    st = host_speed(el, speed_text, speed, &cores);
    if (st == TRD_OK)
        st = trd_platform_add_node(r->pf, id, false, speed, &node);
    if (st == TRD_OK)
        st = trd_platform_set_cores(r->pf, node, cores);
    mpq_clear(speed);
    if (st != TRD_OK) {
        trd_sg_describe(r->path, el, where, sizeof where);
        st = trd_fail_within(st, where);
    }
    return st;
}

static trd_status take_router(reader *r, xmlNode *el)
{
    char where[512];
    const char *id;
    trd_status st = need_attr(r, el, "id", &id);
    if (st == TRD_OK)
        st = walk_children(r, el, ignored_props);
    if (st == TRD_OK && (st = trd_platform_add_node(r->pf, id, true, NULL, NULL)) != TRD_OK) {
        trd_sg_describe(r->path, el, where, sizeof where);
        st = trd_fail_within(st, where);
    }
    return st;
}

typedef struct link_key {
    const reader *r;
    const char *id;
} link_key;

static bool same_id(const void *ctx, int32_t i)
{
    const link_key *k = ctx;
    return strcmp(k->r->links[i].id, k->id) == 0;
}

static sg_link *find_link(const reader *r, const char *id)
{
    link_key k = {r, id};
    int32_t i = trd_index_find(&r->by_id, trd_hash_text(id), same_id, &k);
    return i >= 0 ? &r->links[i] : NULL;
}

/* Keeps link id's cost; false when out of memory. */
static bool keep_link(reader *r, const char *id, const mpq_t cost)
{
    if (r->n_links == r->cap_links) {
        size_t grown = r->cap_links ? 2 * r->cap_links : 16;
        sg_link *bigger = realloc(r->links, grown * sizeof *bigger);
        if (bigger == NULL)
            return false;
        r->links = bigger;
        r->cap_links = grown;
    }
    if (r->n_links >= INT32_MAX ||
        trd_index_add(&r->by_id, trd_hash_text(id), (int32_t)r->n_links, "links") != TRD_OK)
        return false;
    sg_link *link = &r->links[r->n_links++];
    link->id = id;
    mpq_init(link->cost);
    mpq_set(link->cost, cost);
    return true;
}

/* Seconds per MB of a link: 1e6 / bandwidth; its latency is checked,
 * then left out (see the top of this file). */
static trd_status link_cost(const char *bandwidth, const char *latency, mpq_t cost)
{
    trd_status st = TRD_OK;
    if (latency)
        st = trd_simgrid_quantity(latency, TRD_SG_TIME, "latency", cost);
    if (st == TRD_OK)
        st = trd_simgrid_quantity(bandwidth, TRD_SG_BANDWIDTH, "bandwidth", cost);
    if (st == TRD_OK && mpq_sgn(cost) == 0)
        st = trd_fail(TRD_EINVAL, "invalid bandwidth '%s': must be > 0", bandwidth);
    if (st == TRD_OK) {
        mpq_inv(cost, cost);
        mpz_mul_ui(mpq_numref(cost), mpq_numref(cost), 1000000UL);
        mpq_canonicalize(cost);
    }
    return st;
}

/* A SimGrid link is a bandwidth, not a node: its cost waits in the reader
 * until routes name it. */
static trd_status take_link(reader *r, xmlNode *el)
{
    char where[512];
    const char *id, *bandwidth, *policy = trd_sg_attr(el, "sharing_policy");
    trd_sg_describe(r->path, el, where, sizeof where);
    trd_status st = need_attr(r, el, "id", &id);
    if (st == TRD_OK)
        st = need_attr(r, el, "bandwidth", &bandwidth);
    if (st == TRD_OK && find_link(r, id))
        st = trd_fail(TRD_EINVAL, "%s: link '%s' is declared twice", where, id);
    if (st == TRD_OK && policy && strcmp(policy, "SHARED") && strcmp(policy, "SPLITDUPLEX") &&
        strcmp(policy, "FULLDUPLEX") && strcmp(policy, "FATPIPE"))
        st = trd_fail(TRD_EINVAL, "%s: sharing_policy '%s' is not supported (SHARED, "
                      "SPLITDUPLEX, FULLDUPLEX or FATPIPE)", where, policy);
    if (st == TRD_OK)
        st = walk_children(r, el, ignored_props);
    if (st != TRD_OK)
        return st;
    mpq_t cost;
    mpq_init(cost);
    st = link_cost(bandwidth, trd_sg_attr(el, "latency"), cost);
    if (st != TRD_OK)
        st = trd_fail_within(st, where);
    else if (!keep_link(r, id, cost))
        st = trd_fail(TRD_ENOMEM, "%s: no memory for the link", where);
    mpq_clear(cost);
    return st;
}

/* direction picks one half of a SPLITDUPLEX link: both have its bandwidth */
static const char *const link_ctn_attrs[] = {"id", "direction", NULL};

/* The bottleneck of a route: the largest cost of its <link_ctn>s. */
static trd_status route_cost(reader *r, xmlNode *route, const char *where, mpq_t cost)
{
    size_t count = 0;
    for (xmlNode *c = route->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        const char *id;
        trd_status st = TRD_OK;
        if (!xmlStrEqual(c->name, BAD_CAST "link_ctn"))
            return trd_fail(TRD_EINVAL, "%s: <%s> (line %ld) is not supported in a route",
                            where, (const char *)c->name, xmlGetLineNo(c));
        if ((st = trd_sg_check_attrs(r->path, c, link_ctn_attrs)) != TRD_OK ||
            (st = need_attr(r, c, "id", &id)) != TRD_OK)
            return st;
        const sg_link *link = find_link(r, id);
        if (link == NULL)
            return trd_fail(TRD_EINVAL, "%s: unknown link '%s' (links are declared before "
                            "the routes that use them)", where, id);
        if (count++ == 0 || mpq_cmp(link->cost, cost) > 0)
            mpq_set(cost, link->cost);
    }
    if (count == 0)
        return trd_fail(TRD_EINVAL, "%s: a route needs at least one <link_ctn>", where);
    return TRD_OK;
}

static trd_status route_end(const reader *r, const char *name, const char *where, int32_t *id)
{
    *id = trd_platform_find(r->pf, name);
    if (*id < 0)
        return trd_fail(TRD_EINVAL, "%s: unknown host or router '%s' (declare it before the "
                        "route)", where, name);
    return TRD_OK;
}

/* A route between the nodes named by attributes src_attr and dst_attr:
 * src, dst for <route>, gw_src, gw_dst for <zoneRoute>. */
static trd_status take_route_between(reader *r, xmlNode *el, const char *src_attr,
                                     const char *dst_attr)
{
    char where[512];
    const char *src, *dst, *sym = trd_sg_attr(el, "symmetrical");
    int32_t from, to;
    trd_sg_describe(r->path, el, where, sizeof where);
    trd_status st = need_attr(r, el, src_attr, &src);
    if (st == TRD_OK)
        st = need_attr(r, el, dst_attr, &dst);
    bool symmetrical = sym == NULL || !strcmp(sym, "YES") || !strcmp(sym, "yes");
    if (st == TRD_OK && !symmetrical && strcmp(sym, "NO") && strcmp(sym, "no"))
        st = trd_fail(TRD_EINVAL, "%s: symmetrical='%s' (YES or NO)", where, sym);
    if (st == TRD_OK)
        st = route_end(r, src, where, &from);
    if (st == TRD_OK)
        st = route_end(r, dst, where, &to);
    if (st != TRD_OK || from == to) /* a loopback route means nothing to the model */
        return st;
    mpq_t cost;
    mpq_init(cost);
    st = route_cost(r, el, where, cost);
    if (st == TRD_OK)
        st = trd_platform_add_links(r->pf, from, to, cost, symmetrical, where);
    mpq_clear(cost);
    return st;
}

static trd_status take_route(reader *r, xmlNode *el)
{
    return take_route_between(r, el, "src", "dst");
}

static trd_status take_zone_route(reader *r, xmlNode *el)
{
    return take_route_between(r, el, "gw_src", "gw_dst");
}

static trd_status take_zone(reader *r, xmlNode *el);

static const char *const host_attrs[] = {"id", "speed", "core", "pstate", "coordinates", NULL};
static const char *const router_attrs[] = {"id", "coordinates", NULL};
static const char *const link_attrs[] = {"id", "bandwidth", "latency", "sharing_policy", NULL};
static const char *const route_attrs[] = {"src", "dst", "symmetrical", NULL};
static const char *const zone_route_attrs[] = {"src", "dst", "gw_src", "gw_dst", "symmetrical",
                                               NULL};
static const char *const zone_attrs[] = {"id", "routing", NULL};

static const handler zone_children[] = {
    {"host", take_host, host_attrs},
    {"router", take_router, router_attrs},
    {"link", take_link, link_attrs},
    {"route", take_route, route_attrs},
    {"zoneRoute", take_zone_route, zone_route_attrs},
    {"ASroute", take_zone_route, zone_route_attrs},
    {"zone", take_zone, zone_attrs},
    {"AS", take_zone, zone_attrs},
    {"prop", NULL, NULL},
    {NULL, NULL, NULL}};

/* Routings whose routes are all written in the file: each is a link of
 * the graph (Floyd and Dijkstra compute shortest paths over them, which
 * the steady-state LP does not need: it routes by itself). */
static const char *const explicit_routings[] = {"Full", "Floyd", "Dijkstra", "DijkstraCache",
                                                "None", NULL};

static trd_status take_zone(reader *r, xmlNode *el)
{
    char where[512];
    const char *routing;
    trd_status st = need_attr(r, el, "routing", &routing);
    if (st != TRD_OK)
        return st;
    size_t i = 0;
    while (explicit_routings[i] && strcmp(routing, explicit_routings[i]) != 0)
        i++;
    if (explicit_routings[i] == NULL) {
        trd_sg_describe(r->path, el, where, sizeof where);
        return trd_fail(TRD_EINVAL, "%s: routing '%s' is not supported: treduce needs routes "
                        "written in the file (Full, Floyd, Dijkstra, DijkstraCache or None)",
                        where, routing);
    }
    return walk_children(r, el, zone_children);
}

static const handler platform_children[] = {
    {"zone", take_zone, zone_attrs}, {"AS", take_zone, zone_attrs}, {"config", NULL, NULL},
    {NULL, NULL, NULL}};

static trd_status take_platform(reader *r, xmlNode *root)
{
    char where[512];
    trd_sg_describe(r->path, root, where, sizeof where);
    if (!xmlStrEqual(root->name, BAD_CAST "platform"))
        return trd_fail(TRD_EINVAL, "%s: expected <platform> as the root element", where);
    static const char *const platform_attrs[] = {"version", NULL};
    trd_status st = trd_sg_check_version(where, trd_sg_attr(root, "version"));
    if (st == TRD_OK)
        st = trd_sg_check_attrs(r->path, root, platform_attrs);
    if (st == TRD_OK)
        st = walk_children(r, root, platform_children);
    if (st == TRD_OK && r->pf->n_nodes == 0)
        st = trd_fail(TRD_EINVAL, "%s: no host and no router", where);
    return st;
}

trd_status trd_platform_parse_simgrid(const char *text, size_t len, const char *path,
                                      trd_platform **out)
{
    xmlDoc *doc = NULL;
    reader r = {.path = path};
    trd_status st = trd_sg_parse(text, len, path, &doc);
    if (st == TRD_OK)
        st = trd_platform_create(&r.pf);
    if (st == TRD_OK)
        st = trd_sg_refuse_entities(r.path, xmlDocGetRootElement(doc));
    if (st == TRD_OK)
        st = take_platform(&r, xmlDocGetRootElement(doc));
    for (size_t i = 0; i < r.n_links; i++)
        mpq_clear(r.links[i].cost);
    free(r.links);
    trd_index_free(&r.by_id);
    xmlFreeDoc(doc);
    if (st != TRD_OK) {
        trd_platform_free(r.pf);
        return st;
    }
    *out = r.pf;
    return TRD_OK;
}

trd_status trd_platform_load_simgrid(const char *path, trd_platform **out)
{
    return trd_platform_load_with(path, trd_platform_parse_simgrid, out);
}
