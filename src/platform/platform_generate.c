/* platform_generate.c: random hierarchical platforms in the spirit of the
 * Tiers generator that made the platform of Legrand et al., Sec. 4.7
 * (Figure 9: 14 nodes, 8 of them computing).  Three levels:
 *
 *   WAN  1 + (lans + 1) / 2 routers W0, W1, ... on a ring (one link when
 *        there are two), so the backbone has two ways between routers;
 *   MAN  one router Mi per LAN, linked to a random WAN router and, one
 *        time in three, to a second one (another way in and out);
 *   LAN  2 or 3 hosts P0, P1, ... (the computing nodes): a star around
 *        the LAN's first host, which also links to the LAN's MAN router,
 *        so that host relays its neighbours' messages as Pa and Pb do in
 *        Figure 2.
 *
 * Every link goes both ways with one cost.  Costs and speeds are small
 * fractions k/2 (costs 1/2 to 3/2 in the WAN, 1 to 3 between MAN and WAN,
 * 1/2 to 2 in a LAN; speeds 1/2 to 3) so exact LPs on these platforms stay
 * cheap.  With 3 LANs (the default of `treduce platform generate`) that is
 * 12 to 15 nodes with 6 to 9 hosts, the size of Figure 9; 7 LANs give
 * about 30 nodes.  The numbers come from splitmix64 through integer
 * arithmetic only, so a seed gives the same platform on every machine. */
#include <stdio.h>

#include "core/error.h"
#include "core/splitmix.h"
#include "platform/platform_io.h"

/* Uniform in [lo, hi]: draws above the largest multiple of the range are
 * thrown back, so no value is favoured. */
static int32_t uniform(uint64_t *state, int32_t lo, int32_t hi)
{
    uint64_t range = (uint64_t)(hi - lo) + 1, limit = UINT64_MAX - UINT64_MAX % range, x;
    while ((x = trd_splitmix64(state)) >= limit)
        ;
    return lo + (int32_t)(x % range);
}

typedef struct range {
    int32_t lo, hi, den; /* the value is k / den, k uniform in [lo, hi] */
} range;

static const range wan_cost = {1, 3, 2}, man_cost = {2, 6, 2}, lan_cost = {1, 4, 2},
                   host_speed = {1, 6, 2};

typedef struct gen {
    trd_platform *pf;
    uint64_t state;
    mpq_t value;      /* the last number drawn */
    int32_t hosts;    /* hosts made so far, to name the next one */
} gen;

static void draw(gen *g, const range *r)
{
    mpq_set_si(g->value, uniform(&g->state, r->lo, r->hi), (unsigned long)r->den);
    mpq_canonicalize(g->value);
}

static trd_status add_router(gen *g, char level, int32_t index, int32_t *id)
{
    char name[16];
    snprintf(name, sizeof name, "%c%d", level, (int)index);
    return trd_platform_add_node(g->pf, name, true, g->value, id);
}

static trd_status add_host(gen *g, int32_t *id)
{
    char name[16];
    snprintf(name, sizeof name, "P%d", (int)g->hosts++);
    draw(g, &host_speed);
    return trd_platform_add_node(g->pf, name, false, g->value, id);
}

static trd_status connect(gen *g, int32_t a, int32_t b, const range *cost)
{
    draw(g, cost);
    return trd_platform_add_links(g->pf, a, b, g->value, true, NULL);
}

/* WAN routers are nodes 0 .. wan - 1. */
static trd_status build_wan(gen *g, int32_t wan)
{
    trd_status st = TRD_OK;
    for (int32_t i = 0; i < wan && st == TRD_OK; i++)
        st = add_router(g, 'W', i, NULL);
    int32_t ring = wan >= 3 ? wan : wan - 1; /* two routers: one link, not two */
    for (int32_t i = 0; i < ring && st == TRD_OK; i++)
        st = connect(g, i, (i + 1) % wan, &wan_cost);
    return st;
}

static trd_status build_lan(gen *g, int32_t lan, int32_t wan)
{
    int32_t man, hub, host;
    trd_status st = add_router(g, 'M', lan, &man);
    int32_t up = uniform(&g->state, 0, wan - 1);
    if (st == TRD_OK)
        st = connect(g, man, up, &man_cost);
    if (st == TRD_OK && uniform(&g->state, 0, 2) == 0) /* a second, different WAN router */
        st = connect(g, man, (up + uniform(&g->state, 1, wan - 1)) % wan, &man_cost);
    int32_t hosts = uniform(&g->state, 2, 3);
    if (st == TRD_OK && (st = add_host(g, &hub)) == TRD_OK)
        st = connect(g, hub, man, &lan_cost);
    for (int32_t i = 1; i < hosts && st == TRD_OK; i++)
        if ((st = add_host(g, &host)) == TRD_OK)
            st = connect(g, host, hub, &lan_cost);
    return st;
}

trd_status trd_platform_generate(uint64_t seed, int32_t lans, trd_platform **out)
{
    if (out == NULL)
        return trd_fail(TRD_EINVAL, "trd_platform_generate: out is NULL");
    *out = NULL;
    if (lans < 1 || lans > TRD_PLATFORM_LANS_MAX)
        return trd_fail(TRD_EINVAL, "lans = %d: need 1 to %d LANs", (int)lans, TRD_PLATFORM_LANS_MAX);
    gen g = {.state = seed};
    mpq_init(g.value);
    int32_t wan = 1 + (lans + 1) / 2;
    trd_status st = trd_platform_create(&g.pf);
    if (st == TRD_OK)
        st = build_wan(&g, wan);
    for (int32_t lan = 0; lan < lans && st == TRD_OK; lan++)
        st = build_lan(&g, lan, wan);
    mpq_clear(g.value);
    if (st != TRD_OK) {
        trd_platform_free(g.pf);
        return st;
    }
    *out = g.pf;
    return TRD_OK;
}
