/* bench/simgrid_binomial.cpp: the baseline of bench_sim.  SimGrid (s4u,
 * Debian 12's libsimgrid-dev 3.32) simulates the same Binomial-stat
 * reduction as treduce's `binomial` planner: n actors (default 64), round
 * k = 1, 2, ...: rank i*2^k + 2^(k-1) sends its partial result to rank
 * i*2^k, which receives in round order; every transfer takes d = 1 s of
 * simulated time; a receiver computes c * speed flops after each receive
 * (nothing at all when c = 0, the default).  The simulated makespan must be
 * log2(n) * (d + c) = 6 s for n = 64; every repetition is checked.
 *
 * This is the only file of treduce that links SimGrid.
 *
 * Platform (built in code, no XML): one host per rank (1 Gflop/s).  Under
 * the Constant network model (which accepts no link) they sit in an empty
 * zone and every transfer takes 1 s by definition of the model.  Under
 * other models (--model CM02) they sit in a star zone, each with a private
 * split-duplex link of 1 GB/s and no latency, and a message is 1e9 bytes:
 * a transfer takes 1e9 / 1e9 = 1 s (no two concurrent transfers of the
 * pattern share a link).
 *
 * Fastest settings (the defaults here; later --cfg arguments override):
 *   --cfg=network/model:Constant  no LMM sharing system is solved; with
 *   --cfg=network/latency-factor:1 every transfer takes exactly 1 s (the
 *                                 model's transfer time IS the latency
 *                                 factor, 13.01 s by default).  CM02
 *                                 (--model CM02, then with
 *                                 --cfg=network/crosstraffic:0) is the
 *                                 fastest flow model.
 *   --cfg=contexts/factory:raw    SimGrid's hand-written context switch
 *   --log=root.thres:critical     no logging
 *
 * How a "simulation" is timed (--mode):
 *   loop  (default, the figure bench_sim compares against) one engine and
 *         one platform, n actors created once; each actor runs the
 *         reduction R times, the repetitions separated by an s4u::Barrier
 *         (zero simulated time) so repetition r+1 starts afresh at time
 *         6r.  Wall time of repetitions W..R-1 (W warm-up ones dropped)
 *         divided by their number.  It leaves out everything a fresh
 *         simulation pays once (library load, engine and platform
 *         creation, actor creation): a LOWER bound on SimGrid's cost of
 *         one simulation, i.e. the comparison favours SimGrid.  It matches
 *         what treduce's bench_sim times (trd_sim_run on a simulator
 *         created once).  The barrier costs n extra blocking calls per
 *         repetition; `--mode barrier` times the barrier alone so it can
 *         be subtracted.
 *   spawn one engine; a controller actor creates the n actors afresh for
 *         each repetition and joins them: adds actor creation and
 *         destruction, which a fresh SimGrid simulation also pays.
 *   barrier  the loop mode with no transfers: cost of the barrier alone.
 * One engine per process is the only way SimGrid can run (the engine is a
 * singleton), so timing a fresh process per simulation would measure
 * mostly dynamic loading and platform creation (milliseconds); the harness
 * prints that setup time too ("setup_ms") for reference.
 *
 * usage: simgrid_binomial [--mode loop|spawn|barrier] [--reps R]
 *                         [--repeat K] [--warmup W] [--n N] [--c C]
 *                         [--model Constant|CM02] [SimGrid --cfg/--log args]
 * Output: human-readable lines, then one line
 *   "simgrid_us_per_sim <median over the K blocks of R repetitions>". */
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

double wall()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const double SPEED = 1e9;     /* flop/s of every host */
const double BANDWIDTH = 1e9; /* bytes/s of every link */
const uint64_t MSG = 1000000000ULL; /* bytes: BANDWIDTH * d with d = 1 s */

struct config {
    std::string mode = "loop";
    int n = 64;
    int reps = 2000;   /* repetitions per timed block */
    int repeat = 5;    /* timed blocks */
    int warmup = 200;  /* repetitions before the first block */
    double c = 0.0;
};

struct shared {
    config cfg;
    std::vector<sg4::Host*> hosts;
    std::vector<sg4::Mailbox*> box; /* box[i]: where rank i puts its message */
    sg4::BarrierPtr barrier;
    int rounds = 0;
    double expected = 0.0;
    /* written by rank 0 (loop/barrier) or the controller (spawn) */
    std::vector<double> block_s;
    double first_makespan = -1.0;
    long bad = 0; /* repetitions whose makespan was wrong */
};

shared S;
int payload = 42;

/* One Binomial-stat reduction seen from `rank`: receive from each child in
 * round order (combining after each when c > 0), then send to the parent. */
void reduce_once(int rank)
{
    for (int k = 1; (1 << (k - 1)) < S.cfg.n; k++) {
        int step = 1 << k, half = 1 << (k - 1);
        if (rank % step == 0) {
            if (rank + half < S.cfg.n) {
                S.box[rank + half]->get<int>();
                if (S.cfg.c > 0.0)
                    sg4::this_actor::execute(S.cfg.c * SPEED);
            }
        } else { /* rank % step == half: send in this round, then done */
            S.box[rank]->put(&payload, MSG);
            return;
        }
    }
}

void check_makespan(double t0)
{
    double m = sg4::Engine::get_clock() - t0;
    if (S.first_makespan < 0)
        S.first_makespan = m;
    if (std::fabs(m - S.expected) > 1e-9 * std::max(1.0, S.expected))
        S.bad++;
}

/* loop and barrier modes: every rank runs all repetitions itself. */
void looping_rank(int rank)
{
    bool transfers = S.cfg.mode == "loop";
    int total = S.cfg.warmup + S.cfg.repeat * S.cfg.reps;
    double block_t0 = 0.0;
    for (int r = 0; r < total; r++) {
        S.barrier->wait();
        bool timed = r >= S.cfg.warmup;
        int in_block = timed ? (r - S.cfg.warmup) % S.cfg.reps : -1;
        if (rank == 0 && in_block == 0)
            block_t0 = wall();
        double t0 = sg4::Engine::get_clock();
        if (transfers)
            reduce_once(rank);
        if (rank == 0) {
            if (transfers)
                check_makespan(t0);
            if (in_block == S.cfg.reps - 1)
                S.block_s.push_back(wall() - block_t0);
        }
    }
}

/* spawn mode: fresh actors for every repetition. */
void controller()
{
    int total = S.cfg.warmup + S.cfg.repeat * S.cfg.reps;
    std::vector<sg4::ActorPtr> actors((size_t)S.cfg.n);
    double block_t0 = 0.0;
    for (int r = 0; r < total; r++) {
        bool timed = r >= S.cfg.warmup;
        int in_block = timed ? (r - S.cfg.warmup) % S.cfg.reps : -1;
        if (in_block == 0)
            block_t0 = wall();
        double t0 = sg4::Engine::get_clock();
        for (int i = 0; i < S.cfg.n; i++)
            actors[(size_t)i] = sg4::Actor::create("rank", S.hosts[(size_t)i],
                                                   [i] { reduce_once(i); });
        for (auto& a : actors)
            a->join();
        check_makespan(t0);
        if (in_block == S.cfg.reps - 1)
            S.block_s.push_back(wall() - block_t0);
    }
}

/* Constant network model: it refuses links, so an empty zone (routing
 * "None") holds the hosts; every transfer takes 1 s.  Other models: the
 * star zone with one private link per host described at the top. */
void build_platform(bool constant)
{
    auto* zone = constant ? sg4::create_empty_zone("none") : sg4::create_star_zone("star");
    for (int i = 0; i < S.cfg.n; i++) {
        sg4::Host* h = zone->create_host("h" + std::to_string(i), SPEED);
        if (!constant) {
            sg4::SplitDuplexLink* l =
                zone->create_split_duplex_link("l" + std::to_string(i), BANDWIDTH);
            l->set_latency(0.0);
            zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr,
                            {{l, sg4::LinkInRoute::Direction::UP}}, true);
        }
        S.hosts.push_back(h);
        S.box.push_back(sg4::Mailbox::by_name("m" + std::to_string(i)));
    }
    zone->seal();
}

int usage()
{
    std::fprintf(stderr, "usage: simgrid_binomial [--mode loop|spawn|barrier] [--reps R] "
                         "[--repeat K] [--warmup W] [--n N] [--c C] [--model Constant|CM02] "
                         "[--cfg=... --log=...]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    double t_start = wall();
    /* Our options first; the rest (SimGrid's) go to the engine after the
     * fastest defaults, so the caller's --cfg wins. */
    std::string model = "Constant";
    std::vector<std::string> sg_args = {argv[0], "--cfg=contexts/factory:raw",
                                        "--log=root.thres:critical"};
    std::vector<std::string> user;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](void) -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "simgrid_binomial: %s needs a value\n", a.c_str());
                std::exit(usage());
            }
            return argv[++i];
        };
        if (a == "--mode")
            S.cfg.mode = value();
        else if (a == "--reps")
            S.cfg.reps = std::atoi(value());
        else if (a == "--repeat")
            S.cfg.repeat = std::atoi(value());
        else if (a == "--warmup")
            S.cfg.warmup = std::atoi(value());
        else if (a == "--n")
            S.cfg.n = std::atoi(value());
        else if (a == "--c")
            S.cfg.c = std::atof(value());
        else if (a == "--model")
            model = value();
        else if (a.rfind("--cfg=", 0) == 0 || a.rfind("--log=", 0) == 0)
            user.push_back(a);
        else
            return usage();
    }
    if ((S.cfg.mode != "loop" && S.cfg.mode != "spawn" && S.cfg.mode != "barrier") ||
        S.cfg.n < 2 || S.cfg.reps < 1 || S.cfg.repeat < 1 || S.cfg.warmup < 0 ||
        !(S.cfg.c >= 0.0))
        return usage();
    sg_args.push_back("--cfg=network/model:" + model);
    if (model == "Constant") /* its transfer time is the latency factor (13.01 by default) */
        sg_args.push_back("--cfg=network/latency-factor:1");
    else if (model == "CM02") /* no uplink/downlink interference: a smaller LMM system */
        sg_args.push_back("--cfg=network/crosstraffic:0");
    sg_args.insert(sg_args.end(), user.begin(), user.end());
    std::vector<char*> sg_argv;
    for (auto& s : sg_args)
        sg_argv.push_back(&s[0]);
    sg_argv.push_back(nullptr);
    int sg_argc = (int)sg_args.size();

    sg4::Engine e(&sg_argc, sg_argv.data());
    build_platform(model == "Constant");
    while ((1 << S.rounds) < S.cfg.n)
        S.rounds++;
    S.expected = S.rounds * (1.0 + S.cfg.c);
    if (S.cfg.mode == "spawn") {
        sg4::Actor::create("controller", S.hosts[0], controller);
    } else {
        S.barrier = sg4::Barrier::create((unsigned)S.cfg.n);
        for (int i = 0; i < S.cfg.n; i++)
            sg4::Actor::create("rank", S.hosts[(size_t)i], [i] { looping_rank(i); });
    }
    double t_setup = wall() - t_start;
    double t_run = wall();
    e.run();
    t_run = wall() - t_run;

    std::vector<double> us;
    for (double s : S.block_s)
        us.push_back(1e6 * s / S.cfg.reps);
    std::sort(us.begin(), us.end());
    double med = us.empty() ? NAN
                 : us.size() % 2 ? us[us.size() / 2]
                                 : 0.5 * (us[us.size() / 2 - 1] + us[us.size() / 2]);
    std::printf("simgrid %s, mode %s, n = %d, c = %g, network/model %s (args:", SIMGRID_VERSION_STRING,
                S.cfg.mode.c_str(), S.cfg.n, S.cfg.c, model.c_str());
    for (size_t i = 1; i < sg_args.size(); i++)
        std::printf(" %s", sg_args[i].c_str());
    std::printf(")\n");
    if (S.cfg.mode != "barrier") {
        std::printf("simulated makespan %.9g s (expected %g); wrong in %ld of %d repetitions\n",
                    S.first_makespan, S.expected, S.bad,
                    S.cfg.warmup + S.cfg.repeat * S.cfg.reps);
    }
    std::printf("setup_ms %.3f (library, engine, platform, actors); run %.3f s in all\n",
                1e3 * t_setup, t_run);
    std::printf("blocks of %d repetitions, us per simulation:", S.cfg.reps);
    for (double u : us)
        std::printf(" %.2f", u);
    std::printf("\nsimgrid_us_per_sim %.3f\n", med);
    if (S.bad || (S.cfg.mode != "barrier" && S.first_makespan < 0)) {
        std::fprintf(stderr, "simgrid_binomial: wrong simulated makespan\n");
        return 1;
    }
    return 0;
}
