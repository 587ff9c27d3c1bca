/* period.c: from rates per time unit to integers per period, and the
 * schedule of a fixed period (Legrand, Marchal and Robert 2004, Sec. 3.1
 * "the least common multiple of the denominators of all the variables",
 * Sec. 4.2 the integer solution A, Sec. 4.6 Prop. 4). */
#include "steady/steady_internal.h"

/* count = rate * period, an integer since den(rate) divides the period. */
static void to_count(mpz_t count, const mpq_t rate, const mpz_t period)
{
    mpz_divexact(count, period, mpq_denref(rate));
    mpz_mul(count, count, mpq_numref(rate));
}

void trd_sd_set_period(trd_steady *st)
{
    mpz_set(st->period, mpq_denref(st->throughput));
    for (int32_t s = 0; s < st->n_sends; s++)
        mpz_lcm(st->period, st->period, mpq_denref(st->sends[s].rate));
    for (int32_t c = 0; c < st->n_comps; c++)
        mpz_lcm(st->period, st->period, mpq_denref(st->comps[c].rate));
    for (int32_t s = 0; s < st->n_sends; s++)
        to_count(st->sends[s].count, st->sends[s].rate, st->period);
    for (int32_t c = 0; c < st->n_comps; c++)
        to_count(st->comps[c].count, st->comps[c].rate, st->period);
}

/* Prop. 4: each tree T runs r(T) = floor(w(T) * T_fixed / T) times per
 * period T_fixed.  The one-port and compute constraints still hold
 * (r(T) / T_fixed <= w(T) / T), the throughput is sum r(T) / T_fixed and
 * it loses at most card(Trees) / T_fixed against TP. */
void trd_sd_fixed_period(trd_steady *st, int64_t fixed_period)
{
    mpz_t tf, total;
    mpz_inits(tf, total, NULL);
    mpz_set_si(tf, (long)fixed_period);
    st->fixed_period = fixed_period;
    for (int32_t i = 0; i < st->n_trees; i++) {
        trd_sd_tree *tr = &st->trees[i];
        mpz_mul(tr->fixed, tr->weight, tf);
        mpz_fdiv_q(tr->fixed, tr->fixed, st->period);
        mpz_add(total, total, tr->fixed);
    }
    mpq_set_num(st->fixed_throughput, total);
    mpq_set_den(st->fixed_throughput, tf);
    mpq_canonicalize(st->fixed_throughput);
    mpq_sub(st->fixed_loss, st->throughput, st->fixed_throughput);
    mpq_set_si(st->fixed_bound, st->n_trees, 1);
    mpz_set(mpq_denref(st->fixed_bound), tf);
    mpq_canonicalize(st->fixed_bound);
    mpz_clears(tf, total, NULL);
}
