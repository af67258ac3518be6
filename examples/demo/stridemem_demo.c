/*
 * stridemem-demo: the three scenarios of the "stack of views" article, in C,
 * against the public API only.
 *
 *   1. tiles    a large image processed tile by tile through one reused tile
 *               buffer carved from a stack of views, written back into the
 *               output through views;
 *   2. unfold   overlapping windows taken with sm_unfold along both dims and
 *               accumulated (weighted overlap-add) into an output through
 *               views;
 *   3. rnn      a sequence of hidden states h_t = f(h_{t-1}) kept in one
 *               preallocated [T, B, H] buffer, one sm_select view per step.
 *
 * Each scenario runs twice: with views, and doing the same work with fresh
 * tensors (a copy per tile / window / step, results assembled at the end, as
 * code without strided views does). Both variants end with the same result
 * tensor, which is checked against a plain host reference. The table shows
 * the peak bytes allocated on the device during the work (above what was live
 * before it: the inputs), the number of storage allocations, the time, the
 * check, and the report drawn for the scenario.
 *
 * Times: each variant runs once untimed (the warm-up: memory new to the
 * process pays its page faults there), then --runs times in rounds whose
 * order alternates (views first in odd rounds, fresh first in even ones);
 * the table shows the median of the timed runs.
 *
 * Reports, so that the saving can be seen and not only read as a number:
 * every allocation is tagged "<scenario>/<variant>/<role>" (the inputs
 * "<scenario>/input"), the allocator's history is recorded per variant in
 * the warm-up, and at the variant's peak (the moment it holds the most
 * memory) the allocator is read with sm_memory_snapshot; after the timed
 * runs it is written, with a "run" object holding the table's figures for
 * the variant and the counters when it began, to
 *     <out>/<scenario>-<variant>.json        (-cuda.json for cuda:0)
 * After each scenario, tools/memviz draws its snapshots (views and fresh, on
 * every device run so far) into one page, <out>/<scenario>.html; when memviz
 * or python3 is missing, or fails, one line at the end says how to draw them
 * by hand, and the exit status does not change. The last lines list the
 * files written, with absolute paths. Writing the snapshots is left out of
 * the times.
 *
 * Usage: stridemem-demo [--device cpu|cuda] [--size small|large] [--runs N]
 *                       [--out DIR | --no-report] [--quiet]
 *   no --device: CPU, then CUDA when sm_cuda_device_count() > 0 (otherwise
 *   one line says why CUDA was skipped).
 *   --device cuda with no usable GPU exits with 77 (a "skipped" code).
 *   --out DIR: where the reports go (default ./stridemem-demo-out, created
 *   with its parents); --no-report writes no file at all.
 *   --quiet: no progress. Otherwise a variant that runs longer than a moment
 *   (--size large) shows its progress on stderr: one updating line on a
 *   terminal, else a line at each tenth of the work, at most one a second.
 * Environment: STRIDEMEM_MEMVIZ, the memviz.py to use (default: the one in
 * the source tree the demo was built from); python3 is taken from PATH.
 * Exit status: 0 when every check passes and nothing leaks, 1 otherwise
 * (a report that cannot be written included), 2 on a usage error.
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with XSI: posix_spawnp, realpath, isatty */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stridemem.h"

extern char** environ;

#define DEMO_SKIPPED 77

/* ------------------------------------------------------------------------ */
/* Error handling: every sm_ call goes through DEMO()                        */
/* ------------------------------------------------------------------------ */

static void demo_check(sm_status st, const char* expr, int line)
{
    if (st != SM_OK) {
        fprintf(stderr, "stridemem-demo: line %d: %s\n  -> %s: %s\n", line, expr,
                sm_status_string(st), sm_last_error());
        exit(1);
    }
}
#define DEMO(call) demo_check((call), #call, __LINE__)

static int g_failures = 0;

static void* demo_malloc(size_t n)
{
    void* p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "stridemem-demo: out of host memory (%lu bytes)\n", (unsigned long)n);
        exit(1);
    }
    return p;
}

/* A new string, a + b + c. */
static char* str3(const char* a, const char* b, const char* c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char* s = (char*)demo_malloc(la + lb + lc + 1);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */
/* ------------------------------------------------------------------------ */

typedef struct demo_config {
    const char* name;
    int64_t img;       /* scenario 1: img x img image           */
    int64_t tile;      /*             tile x tile tiles          */
    int64_t win_img;   /* scenario 2: win_img x win_img image    */
    int64_t win, step; /*             window size, step < win    */
    int64_t T, B, H;   /* scenario 3: steps, batch, hidden size  */
} demo_config;

static const demo_config k_small = {"small", 512, 64, 256, 32, 16, 32, 4, 64};
static const demo_config k_large = {"large", 8192, 256, 4096, 256, 128, 256, 64, 1024};

enum { SC_TILES, SC_UNFOLD, SC_RNN, SC_COUNT };

static const struct {
    const char* name;  /* also the tag of its allocations and its files' names */
    const char* unit;  /* what its progress counts */
    const char* title; /* its page's title */
    const char* why;   /* one sentence on its page: why the views variant needs less */
} k_scenarios[SC_COUNT] = {
    {"tiles", "tiles", "one tile buffer from a stack of views vs a copy per tile",
     "With views, the output is allocated once and every tile goes through one reused "
     "buffer from a stack and back through a view of the output; fresh tensors hold a copy "
     "and a result for every tile until the output is assembled, so the image is held twice."},
    {"unfold", "windows", "overlapping windows as views (sm_unfold) vs every window copied",
     "With views, the windows are strided views (sm_unfold) of the image and of the output, "
     "so only the output is allocated; copying every window (im2col) allocates each "
     "overlapping pixel once per window that covers it."},
    {"rnn", "steps", "hidden states in one [T, B, H] buffer vs a tensor per step",
     "With views, each step writes its state into a view (sm_select) of one [T, B, H] "
     "buffer, which is the result; fresh tensors hold every step's state and then a new "
     "[T, B, H] tensor they are stacked into, so the states are held twice."}};

/* ------------------------------------------------------------------------ */
/* Progress, on stderr                                                      */
/* ------------------------------------------------------------------------ */

enum { PROGRESS_OFF, PROGRESS_TTY, PROGRESS_LINES };
static int g_progress_mode = PROGRESS_OFF;

/* A variant that ends sooner shows nothing: small runs stay quiet. */
#define PROGRESS_DELAY_MS 500.0
/* A terminal line is redrawn at most this often: writing it is not free. */
#define PROGRESS_REDRAW_MS 100.0
/* Without a terminal (a log) a line per tenth of the work, at most this often. */
#define PROGRESS_LINE_MS 1000.0

typedef struct progress {
    char label[32];   /* "tiles (fresh)" */
    const char* unit; /* "tiles" */
    int64_t total;
    int64_t next_tenth; /* log lines: the tenth of the work the next one waits for */
    double t0, last;    /* start, last line written */
    int drawn;          /* a terminal line is on screen */
} progress;

static void progress_begin(progress* p, int sc, const char* variant, int64_t total)
{
    snprintf(p->label, sizeof p->label, "%s (%s)", k_scenarios[sc].name, variant);
    p->unit = k_scenarios[sc].unit;
    p->total = total > 0 ? total : 1;
    p->next_tenth = 1;
    p->t0 = p->last = now_ms();
    p->drawn = 0;
}

/* done of total units are finished. */
static void progress_tick(progress* p, int64_t done)
{
    double t, elapsed;
    if (g_progress_mode == PROGRESS_OFF) return;
    t = now_ms();
    elapsed = t - p->t0;
    if (elapsed < PROGRESS_DELAY_MS) return;
    if (g_progress_mode == PROGRESS_TTY) {
        if (p->drawn && t - p->last < PROGRESS_REDRAW_MS && done < p->total) return;
        /* \r: back to the line's start; ESC [K: erase what a longer line left. */
        fprintf(stderr, "\r%s: %" PRId64 "/%" PRId64 " %s  %.1f s\033[K", p->label, done,
                p->total, p->unit, elapsed / 1e3);
        p->drawn = 1;
    } else {
        if (done * 10 < p->next_tenth * p->total || t - p->last < PROGRESS_LINE_MS) return;
        fprintf(stderr, "%s: %" PRId64 "/%" PRId64 " %s  %.1f s\n", p->label, done, p->total,
                p->unit, elapsed / 1e3);
        p->next_tenth = done * 10 / p->total + 1;
    }
    fflush(stderr);
    p->last = t;
}

/* Erases the terminal line, so that the table goes on below clean. */
static void progress_end(progress* p)
{
    if (p->drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        p->drawn = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Reports: a snapshot per variant (JSON), a page per scenario (HTML)        */
/* ------------------------------------------------------------------------ */

/* The history ring of one variant, in events. The busiest variant of --size
 * large, tiles/fresh (1,024 tiles), makes about 4,100 events up to its peak;
 * the ring keeps only the newest, so a smaller one would cut the start off
 * the timeline (the report test checks that nothing is dropped). */
#define HISTORY_EVENTS ((int64_t)1 << 16)

/* A scenario's snapshots: two variants, on up to two devices. */
#define MAX_SNAPSHOTS 4

/* The viewer in the source tree the demo was built from (set by CMake). */
#ifdef SM_DEMO_MEMVIZ
#define MEMVIZ_DEFAULT SM_DEMO_MEMVIZ
#else
#define MEMVIZ_DEFAULT NULL
#endif

typedef struct scenario_report {
    char* json[MAX_SNAPSHOTS]; /* written so far, absolute paths, in run order */
    int njson;
    int html; /* <scenario>.html is drawn from all of them */
} scenario_report;

static struct {
    int enabled;         /* 0 with --no-report: no file at all */
    char* dir;           /* absolute */
    const char* memviz;  /* memviz.py; NULL when unknown */
    char* memviz_why;    /* the first reason a page was not drawn */
    scenario_report sc[SC_COUNT];
} g_report;

/* mkdir -p. 0, or -1 with errno set. */
static int make_dirs(const char* dir)
{
    char* p = str3(dir, "", "");
    char* q;
    int rc = 0, err = 0;
    for (q = p + 1; rc == 0; ++q) {
        char c = *q;
        if (c != '/' && c != '\0') continue;
        *q = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            err = errno;
            rc = -1;
        }
        *q = c;
        if (c == '\0') break;
    }
    free(p);
    errno = err;
    return rc;
}

/* Creates the report directory (and its parents) and proves it writable up
 * front, so that a bad --out fails in a second, not after the work. */
static void prepare_out_dir(const char* dir)
{
    struct stat st;
    char *full = NULL, *probe;
    FILE* f;
    int err = 0;
    if (dir[0] == '\0')
        err = ENOENT;
    else if (make_dirs(dir) != 0 || stat(dir, &st) != 0)
        err = errno;
    else if (!S_ISDIR(st.st_mode))
        err = ENOTDIR;
    else if ((full = realpath(dir, NULL)) == NULL)
        err = errno;
    if (!err) {
        /* A file written, not access(): root, read-only mounts and ACLs all
         * answer the same way then. */
        probe = str3(full, "/", ".stridemem-demo-probe");
        errno = 0;
        f = fopen(probe, "w");
        if (f == NULL || fclose(f) != 0) err = errno ? errno : EIO;
        remove(probe);
        free(probe);
    }
    if (err) {
        fprintf(stderr,
                "stridemem-demo: cannot write the reports to '%s': %s\n"
                "  (choose another directory with --out DIR, or write none with --no-report)\n",
                dir, strerror(err));
        exit(1);
    }
    g_report.dir = full;
}

/* <out>/<scenario>-<variant>.json; cuda:0's end in -cuda, so that a run on
 * both devices keeps both. */
static char* snapshot_path(int sc, const char* variant, sm_device dev)
{
    char name[64];
    snprintf(name, sizeof name, "/%s-%s%s.json", k_scenarios[sc].name, variant,
             dev.type == SM_DEVICE_CUDA ? "-cuda" : "");
    return str3(g_report.dir, name, "");
}

/* The device's snapshot, as a new NUL-terminated string. */
static char* read_snapshot(sm_device dev)
{
    size_t need = 0, len = 0;
    char* buf = NULL;
    /* The "needed" convention: the size, then the text, in a loop, since
     * the text may grow between two calls. */
    DEMO(sm_memory_snapshot(dev, NULL, 0, &need));
    while (need > len) {
        len = need;
        free(buf);
        buf = (char*)demo_malloc(len);
        DEMO(sm_memory_snapshot(dev, buf, len, &need));
    }
    return buf;
}

static const char* device_name(sm_device dev);

/* Runs python3 MEMVIZ JSON... -o HTML --title TITLE with its output in LOG.
 * NULL when the page was drawn, else why not (a new string). */
static char* run_memviz(const scenario_report* r, char* html, char* log, char* title,
                        const char* note)
{
    char* argv[MAX_SNAPSHOTS + 10];
    char why[512];
    posix_spawn_file_actions_t fa;
    struct stat st;
    pid_t pid = 0;
    int n = 0, i, rc, status;
    if (g_report.memviz == NULL)
        return str3("memviz's location is unknown (set STRIDEMEM_MEMVIZ to its memviz.py)", "", "");
    if (access(g_report.memviz, R_OK) != 0)
        return str3("memviz not found at ", g_report.memviz,
                    " (set STRIDEMEM_MEMVIZ to its memviz.py)");
    argv[n++] = (char*)"python3";
    argv[n++] = (char*)g_report.memviz;
    for (i = 0; i < r->njson; ++i) argv[n++] = r->json[i];
    argv[n++] = (char*)"-o";
    argv[n++] = html;
    argv[n++] = (char*)"--title";
    argv[n++] = title;
    argv[n++] = (char*)"--note";
    argv[n++] = (char*)note;
    argv[n] = NULL;
    /* Its output goes to LOG: the table stays readable, and a failure can be
     * looked into. posix_spawn, not system(): no shell, so no quoting. */
    rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log,
                                              O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
        if (rc == 0) {
            fflush(NULL);
            rc = posix_spawnp(&pid, "python3", &fa, NULL, argv, environ);
        }
        posix_spawn_file_actions_destroy(&fa);
    }
    if (rc != 0) {
        snprintf(why, sizeof why, "python3 could not be started (%s; is it on PATH?)",
                 strerror(rc));
        return str3(why, "", "");
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, sizeof why, "waiting for memviz failed: %s", strerror(errno));
            return str3(why, "", "");
        }
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(html, &st) == 0) {
        remove(log);
        return NULL;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        snprintf(why, sizeof why, "memviz wrote no %s; its output is in %s", html, log);
    else if (WIFEXITED(status))
        snprintf(why, sizeof why, "memviz failed (exit status %d); its output is in %s",
                 WEXITSTATUS(status), log);
    else
        snprintf(why, sizeof why, "memviz failed (signal %d); its output is in %s",
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0, log);
    return str3(why, "", "");
}

/* <out>/<scenario>.html from the scenario's snapshots so far (views and
 * fresh, on each device run), when memviz is found; else it says why at the
 * end. Never changes the exit status. */
static void draw_report(int sc, const demo_config* c)
{
    scenario_report* r = &g_report.sc[sc];
    const char* name = k_scenarios[sc].name;
    char *html, *log, *why;
    char title[128];
    if (!g_report.enabled) return;
    html = str3(g_report.dir, "/", name);
    log = str3(html, ".memviz.log", "");
    {
        char* h = str3(html, ".html", "");
        free(html);
        html = h;
    }
    /* A page or log left by an earlier run would not match these snapshots. */
    remove(html);
    remove(log);
    snprintf(title, sizeof title, "%s: %s (stridemem-demo, size %s)", name,
             k_scenarios[sc].title, c->name);
    why = run_memviz(r, html, log, title, k_scenarios[sc].why);
    r->html = why == NULL;
    if (why != NULL && g_report.memviz_why == NULL)
        g_report.memviz_why = why;
    else
        free(why);
    free(log);
    free(html);
}

/* The table's last column: the page, or the snapshots when there is none. */
static void report_cell(int sc, sm_device dev, char* buf, size_t len)
{
    if (!g_report.enabled)
        snprintf(buf, len, "-");
    else if (g_report.sc[sc].html)
        snprintf(buf, len, "%s.html", k_scenarios[sc].name);
    else
        snprintf(buf, len, "%s-{views,fresh}%s.json", k_scenarios[sc].name,
                 dev.type == SM_DEVICE_CUDA ? "-cuda" : "");
}

/* The index: every file written, with absolute paths, and one line on how
 * to draw the pages by hand when memviz could not. */
static void print_reports(void)
{
    int sc, i, first_missing = -1, pages = 0;
    if (!g_report.enabled) return;
    for (sc = 0; sc < SC_COUNT; ++sc) pages += g_report.sc[sc].html;
    printf("\nReports written (each variant's memory at its peak%s):\n",
           pages ? "; open the .html in a browser" : ", as JSON");
    for (sc = 0; sc < SC_COUNT; ++sc) {
        const scenario_report* r = &g_report.sc[sc];
        const char* name = k_scenarios[sc].name;
        if (r->njson == 0) continue;
        printf("  %-6s:", name);
        if (r->html) {
            printf(" %s/%s.html  (", g_report.dir, name);
            for (i = 0; i < r->njson; ++i)
                printf("%s%s", i ? ", " : "", strrchr(r->json[i], '/') + 1);
            printf(")\n");
        } else {
            for (i = 0; i < r->njson; ++i) printf(" %s", r->json[i]);
            printf("\n");
            if (first_missing < 0) first_missing = sc;
        }
    }
    if (first_missing < 0) return;
    printf("No HTML: %s; to draw a page by hand: python3 %s", g_report.memviz_why,
           g_report.memviz ? g_report.memviz : "tools/memviz/memviz.py");
    for (i = 0; i < g_report.sc[first_missing].njson; ++i)
        printf(" %s", g_report.sc[first_missing].json[i]);
    printf(" -o %s/%s.html", g_report.dir, k_scenarios[first_missing].name);
    for (sc = first_missing + 1, i = 0; sc < SC_COUNT; ++sc) {
        if (g_report.sc[sc].njson == 0 || g_report.sc[sc].html) continue;
        printf("%s%s", i++ ? ", " : " (likewise for ", k_scenarios[sc].name);
    }
    printf("%s\n", i ? ")" : "");
}

/* ------------------------------------------------------------------------ */
/* Measurement                                                              */
/* ------------------------------------------------------------------------ */

/* Timed runs per variant: the times shown are their median. A first,
 * untimed round runs both variants once more (it pays the page faults of
 * memory new to the process, and writes the reports); then the variants'
 * order alternates from round to round, so that neither is always the one
 * that runs on a cold cache. */
#define MAX_RUNS 99
#define DEFAULT_RUNS_SMALL 5
#define DEFAULT_RUNS_LARGE 3

typedef struct variant_result {
    int64_t peak_bytes; /* peak allocated above the baseline */
    int64_t allocs;     /* storage allocations served        */
    double ms;          /* the median of runs_ms              */
    double runs_ms[MAX_RUNS];
    int ran_first[MAX_RUNS]; /* 1: this variant ran first in that round */
    int nruns;
    double warmup_ms;         /* the untimed round's time */
    sm_memory_stats_t base;   /* the device's counters when the warm-up began */
    char* snapshot;           /* taken at the warm-up's peak; NULL without reports */
} variant_result;

typedef struct meter {
    sm_device dev;
    sm_memory_stats_t base;
    double t0;
    double excluded_ms; /* writing snapshots: not the variant's time */
} meter;

static void read_stats(sm_device dev, sm_memory_stats_t* st)
{
    memset(st, 0, sizeof *st);
    st->struct_size = (uint32_t)sizeof *st;
    DEMO(sm_memory_stats(dev, st));
}

/* The median of n > 0 values (sorted in place): the middle one, or the mean
 * of the two middle ones. */
static double median_ms(double* v, int n)
{
    int i, j;
    for (i = 1; i < n; ++i)
        for (j = i; j > 0 && v[j - 1] > v[j]; --j) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Whether views runs first in round `round` (0 is the warm-up, then the
 * timed rounds 1..runs): views in the odd rounds, fresh in the even ones. */
static int views_first(int round) { return round == 0 || round % 2 == 1; }

/* Cached blocks go back to the system and peaks restart, so the two variants
 * start from the same state; the history restarts too (a fresh ring), so
 * that each snapshot's timeline is its own variant's. */
static void meter_start(meter* m, sm_device dev, int record)
{
    m->dev = dev;
    DEMO(sm_synchronize(dev));
    DEMO(sm_empty_cache(dev));
    DEMO(sm_reset_peak_stats(dev));
    if (record) DEMO(sm_memory_record_history(dev, HISTORY_EVENTS));
    read_stats(dev, &m->base);
    m->excluded_ms = 0.0;
    m->t0 = now_ms();
}

/* The run's figures: its time, its peak above what was live before it (the
 * inputs) and the allocations it made. */
static void meter_stop(const meter* m, int record, double* ms, int64_t* peak, int64_t* allocs)
{
    sm_memory_stats_t st;
    DEMO(sm_synchronize(m->dev));
    *ms = now_ms() - m->t0 - m->excluded_ms;
    read_stats(m->dev, &st);
    *peak = st.peak_allocated_bytes - m->base.allocated_bytes;
    *allocs = st.num_allocs - m->base.num_allocs;
    /* Off between variants: the checks and the next set-up are no variant's. */
    if (record) DEMO(sm_memory_record_history(m->dev, 0));
}

/* One run of one variant of one scenario. */
typedef struct variant_run {
    sm_device dev;
    int sc;              /* SC_* */
    const char* variant; /* "views" or "fresh" */
    int record;          /* the warm-up: history and a snapshot at the peak */
    meter m;
    progress prog;
    char* snapshot;
    int snapshot_taken;
} variant_run;

/* Starts measuring a variant of `steps` units of work. Its allocations are
 * tagged "<scenario>/<variant>/...": the scenario pushed "<scenario>", the
 * variant functions push the role of each allocation. */
static void variant_begin(variant_run* vr, sm_device dev, int sc, const char* variant,
                          int64_t steps, int record)
{
    vr->dev = dev;
    vr->sc = sc;
    vr->variant = variant;
    vr->record = record && g_report.enabled;
    vr->snapshot = NULL;
    vr->snapshot_taken = 0;
    meter_start(&vr->m, dev, vr->record);
    DEMO(sm_push_tag(variant));
    progress_begin(&vr->prog, sc, variant, steps);
}

/* Ends a run: the warm-up (round 0) sets the result's memory figures and
 * keeps its snapshot; a timed round adds its time, and must see the same
 * memory figures (the allocator starts each run from the same state). */
static void variant_end(variant_run* vr, variant_result* r, int round, int first)
{
    double ms;
    int64_t peak, allocs;
    meter_stop(&vr->m, vr->record, &ms, &peak, &allocs);
    progress_end(&vr->prog);
    DEMO(sm_pop_tag());
    if (vr->record && !vr->snapshot_taken) {
        fprintf(stderr, "stridemem-demo: %s/%s wrote no snapshot\n", k_scenarios[vr->sc].name,
                vr->variant);
        ++g_failures;
    }
    if (round == 0) {
        r->peak_bytes = peak;
        r->allocs = allocs;
        r->warmup_ms = ms;
        r->base = vr->m.base;
        r->snapshot = vr->snapshot;
        r->nruns = 0;
        return;
    }
    if (peak != r->peak_bytes || allocs != r->allocs) {
        fprintf(stderr,
                "stridemem-demo: %s/%s: run %d peaked at %" PRId64 " bytes with %" PRId64
                " allocations, the first at %" PRId64 " with %" PRId64 "\n",
                k_scenarios[vr->sc].name, vr->variant, round, peak, allocs, r->peak_bytes,
                r->allocs);
        ++g_failures;
    }
    if (r->nruns < MAX_RUNS) {
        r->ran_first[r->nruns] = first;
        r->runs_ms[r->nruns++] = ms;
    }
}

/* The median of the timed runs (the warm-up's time when there were none). */
static double result_median(const variant_result* r)
{
    double v[MAX_RUNS];
    if (r->nruns == 0) return r->warmup_ms;
    memcpy(v, r->runs_ms, (size_t)r->nruns * sizeof(double));
    return median_ms(v, r->nruns);
}

/* Called by each variant where it holds the most memory (its peak, which is
 * what the table's peak column counts), so that the snapshot shows what the
 * peak is made of. Only the warm-up takes one; the time it takes is not the
 * variant's. The file is written when the timed runs are done, with them. */
static void at_peak(variant_run* vr)
{
    double t0;
    if (!vr->record) return;
    /* Work queued on the GPU runs now, not during the excluded time. */
    DEMO(sm_synchronize(vr->dev));
    t0 = now_ms();
    vr->snapshot = read_snapshot(vr->dev);
    vr->snapshot_taken = 1;
    vr->m.excluded_ms += now_ms() - t0;
}

/* The snapshot of a variant's warm-up, with a "run" object added (a field
 * the format lets writers add): what the table shows for the variant (its
 * own peak above the inputs, allocations, median time and every timed run)
 * and the device's counters when it began, so that a viewer can show the
 * variant's counts rather than the process's. */
static void save_snapshot(int sc, const char* variant, sm_device dev, variant_result* r)
{
    scenario_report* rep = &g_report.sc[sc];
    const sm_memory_stats_t* b = &r->base;
    char* path;
    char* close;
    FILE* f;
    int ok, i;
    if (r->snapshot == NULL) return;
    path = snapshot_path(sc, variant, dev);
    close = strrchr(r->snapshot, '}');
    if (close == NULL) {
        fprintf(stderr, "stridemem-demo: the snapshot of %s/%s is not a JSON object\n",
                k_scenarios[sc].name, variant);
        exit(1);
    }
    *close = '\0';
    errno = 0;
    f = fopen(path, "w");
    ok = f != NULL;
    if (ok) {
        fputs(r->snapshot, f);
        fprintf(f,
                ",\"run\":{\"scenario\":\"%s\",\"variant\":\"%s\",\"device\":\"%s\","
                "\"peak_bytes\":%" PRId64 ",\"allocs\":%" PRId64 ",\"time_ms\":%.17g,"
                "\"warmup_ms\":%.17g,\"runs_ms\":[",
                k_scenarios[sc].name, variant, device_name(dev), r->peak_bytes, r->allocs,
                r->ms, r->warmup_ms);
        /* Every digit of the doubles: a reader gets the very values whose
         * median the table prints. */
        for (i = 0; i < r->nruns; ++i) fprintf(f, "%s%.17g", i ? "," : "", r->runs_ms[i]);
        fprintf(f, "],\"ran_first\":[");
        for (i = 0; i < r->nruns; ++i)
            fprintf(f, "%s%s", i ? "," : "", r->ran_first[i] ? "true" : "false");
        fprintf(f,
                "],\"baseline\":{\"allocated_bytes\":%" PRId64 ",\"reserved_bytes\":%" PRId64
                ",\"num_allocs\":%" PRId64 ",\"num_frees\":%" PRId64 ",\"cache_hits\":%" PRId64
                ",\"device_allocs\":%" PRId64 ",\"device_frees\":%" PRId64 "}}}\n",
                b->allocated_bytes, b->reserved_bytes, b->num_allocs, b->num_frees,
                b->cache_hits, b->device_allocs, b->device_frees);
        ok = !ferror(f);
    }
    if (f != NULL && fclose(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "stridemem-demo: cannot write %s: %s\n", path,
                errno ? strerror(errno) : "write error");
        exit(1);
    }
    free(r->snapshot);
    r->snapshot = NULL;
    if (rep->njson < MAX_SNAPSHOTS)
        rep->json[rep->njson++] = path;
    else
        free(path);
}

/* ------------------------------------------------------------------------ */
/* Small helpers over the API                                               */
/* ------------------------------------------------------------------------ */

/* t[r : r + h, c : c + w] of a 2-D tensor: a view. */
static sm_tensor view_2d(sm_tensor t, int64_t r, int64_t c, int64_t h, int64_t w)
{
    sm_tensor rows, out;
    DEMO(sm_narrow(t, 0, r, h, &rows));
    DEMO(sm_narrow(rows, 1, c, w, &out));
    DEMO(sm_tensor_release(rows));
    return out;
}

/* t[i, j] of a tensor with at least 2 dims: a view. */
static sm_tensor select_2(sm_tensor t, int64_t i, int64_t j)
{
    sm_tensor a, out;
    DEMO(sm_select(t, 0, i, &a));
    DEMO(sm_select(a, 0, j, &out));
    DEMO(sm_tensor_release(a));
    return out;
}

static float* to_host_f32(sm_tensor t, int64_t numel)
{
    int64_t nbytes;
    float* buf;
    DEMO(sm_nbytes(t, &nbytes));
    if (nbytes != numel * (int64_t)sizeof(float)) {
        fprintf(stderr, "stridemem-demo: result has %" PRId64 " bytes, expected %" PRId64 "\n",
                nbytes, numel * (int64_t)sizeof(float));
        exit(1);
    }
    buf = (float*)demo_malloc((size_t)nbytes);
    DEMO(sm_copy_to_host(t, buf, (size_t)nbytes));
    return buf;
}

/* Compares a result tensor with the host reference; exact (the data are
 * small integers, every intermediate is exactly representable in float32). */
static int check_result(const char* what, sm_tensor t, const float* ref, int64_t numel)
{
    float* got = to_host_f32(t, numel);
    int64_t i, bad = 0, first = -1;
    for (i = 0; i < numel; ++i) {
        if (got[i] != ref[i]) {
            if (first < 0) first = i;
            ++bad;
        }
    }
    if (bad) {
        fprintf(stderr, "  %s: %" PRId64 " of %" PRId64 " elements differ; first at %" PRId64
                        ": got %g, expected %g\n",
                what, bad, numel, first, (double)got[first], (double)ref[first]);
    }
    free(got);
    return bad == 0;
}


/* ------------------------------------------------------------------------ */
/* Scenario 1: tile by tile through one reused tile buffer                  */
/* ------------------------------------------------------------------------ */

/* The per-tile work: a normalization done in place. */
#define S1_MEAN 128.0
#define S1_SCALE 2.0
#define S1_LO (-100.0)
#define S1_HI 100.0

static void s1_normalize(sm_tensor tile)
{
    DEMO(sm_inplace_scalar(tile, SM_OP_SUB, S1_MEAN, 0.0));
    DEMO(sm_inplace_scalar(tile, SM_OP_MUL, S1_SCALE, 0.0));
    DEMO(sm_inplace_scalar(tile, SM_OP_CLAMP, S1_LO, S1_HI));
}

static int64_t s1_count(const demo_config* c)
{
    int64_t per_side = (c->img + c->tile - 1) / c->tile;
    return per_side * per_side;
}

static sm_tensor s1_views(sm_tensor img, const demo_config* c, variant_run* vr)
{
    int64_t shape[2];
    int64_t r, col, k = 0;
    sm_tensor out;
    sm_stack stack;
    shape[0] = c->img;
    shape[1] = c->img;
    DEMO(sm_push_tag("output"));
    DEMO(sm_empty(shape, 2, SM_FLOAT32, vr->dev, &out));
    DEMO(sm_pop_tag());
    /* One buffer for one tile, reused for every tile. */
    DEMO(sm_push_tag("tile-buffer"));
    DEMO(sm_stack_create(vr->dev,
                         c->tile * c->tile * (int64_t)sizeof(float) + SM_STACK_ALIGNMENT, &stack));
    DEMO(sm_pop_tag());
    for (r = 0; r < c->img; r += c->tile) {
        for (col = 0; col < c->img; col += c->tile) {
            int64_t th = min64(c->tile, c->img - r), tw = min64(c->tile, c->img - col);
            int64_t tshape[2], mark;
            sm_tensor buf, src, dst;
            tshape[0] = th;
            tshape[1] = tw;
            DEMO(sm_stack_mark(stack, &mark));
            DEMO(sm_stack_push(stack, tshape, 2, SM_FLOAT32, &buf));
            src = view_2d(img, r, col, th, tw);
            DEMO(sm_copy_into(buf, src));
            s1_normalize(buf);
            dst = view_2d(out, r, col, th, tw);
            DEMO(sm_copy_into(dst, buf));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(src));
            DEMO(sm_tensor_release(buf));
            DEMO(sm_stack_pop_to(stack, mark));
            progress_tick(&vr->prog, ++k);
        }
    }
    /* The peak is flat: the output and the one tile buffer, from the start. */
    at_peak(vr);
    DEMO(sm_stack_release(stack));
    return out;
}

static sm_tensor s1_fresh(sm_tensor img, const demo_config* c, variant_run* vr)
{
    int64_t n = s1_count(c), k = 0, r, col;
    int64_t shape[2];
    sm_tensor* results = (sm_tensor*)demo_malloc((size_t)n * sizeof(sm_tensor));
    sm_tensor out;
    /* A copy of each tile, and a fresh output per tile. */
    for (r = 0; r < c->img; r += c->tile) {
        for (col = 0; col < c->img; col += c->tile) {
            sm_tensor src = view_2d(img, r, col, min64(c->tile, c->img - r),
                                    min64(c->tile, c->img - col));
            sm_tensor in;
            DEMO(sm_push_tag("tile-copy"));
            DEMO(sm_contiguous(src, SM_CONTIGUOUS, &in, NULL));
            DEMO(sm_pop_tag());
            DEMO(sm_push_tag("tile-results"));
            DEMO(sm_clone(in, SM_CONTIGUOUS, &results[k]));
            DEMO(sm_pop_tag());
            s1_normalize(results[k]);
            DEMO(sm_tensor_release(in));
            DEMO(sm_tensor_release(src));
            progress_tick(&vr->prog, ++k);
        }
    }
    /* The tiles are assembled into the output image at the end. */
    shape[0] = c->img;
    shape[1] = c->img;
    DEMO(sm_push_tag("output"));
    DEMO(sm_empty(shape, 2, SM_FLOAT32, vr->dev, &out));
    DEMO(sm_pop_tag());
    /* The peak: every tile's result and the output they go into (one tile
     * copy more, in the last tile, is less than the output). The assembly
     * frees the results one by one. */
    at_peak(vr);
    k = 0;
    for (r = 0; r < c->img; r += c->tile) {
        for (col = 0; col < c->img; col += c->tile) {
            sm_tensor dst = view_2d(out, r, col, min64(c->tile, c->img - r),
                                    min64(c->tile, c->img - col));
            DEMO(sm_copy_into(dst, results[k]));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(results[k]));
            ++k;
        }
    }
    free(results);
    return out;
}

/* ------------------------------------------------------------------------ */
/* Scenario 2: overlapping windows with unfold, weighted overlap-add          */
/* ------------------------------------------------------------------------ */

static double s2_gain(int64_t i, int64_t j) { return (double)(1 + (i + 2 * j) % 3); }

/* [nh, nw, win, win] view of the overlapping windows of a 2-D tensor. */
static sm_tensor windows_of(sm_tensor t, const demo_config* c)
{
    sm_tensor rows, out;
    DEMO(sm_unfold(t, 0, c->win, c->step, &rows));
    DEMO(sm_unfold(rows, 1, c->win, c->step, &out));
    DEMO(sm_tensor_release(rows));
    return out;
}

/* Windows per side. */
static int64_t s2_count(const demo_config* c) { return (c->win_img - c->win) / c->step + 1; }

static sm_tensor s2_views(sm_tensor img, const demo_config* c, variant_run* vr)
{
    int64_t shape[2], nw = s2_count(c), i, j;
    sm_tensor out, in_w, out_w;
    shape[0] = c->win_img;
    shape[1] = c->win_img;
    DEMO(sm_push_tag("output"));
    DEMO(sm_zeros(shape, 2, SM_FLOAT32, vr->dev, &out));
    DEMO(sm_pop_tag());
    in_w = windows_of(img, c);
    out_w = windows_of(out, c); /* overlapping, but each window alone is not */
    for (i = 0; i < nw; ++i) {
        for (j = 0; j < nw; ++j) {
            sm_tensor src = select_2(in_w, i, j), dst = select_2(out_w, i, j);
            DEMO(sm_inplace_tensor(dst, SM_OP_ADD, src, s2_gain(i, j)));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(src));
            progress_tick(&vr->prog, i * nw + j + 1);
        }
    }
    /* The peak is flat: the output alone; the windows are views. */
    at_peak(vr);
    DEMO(sm_tensor_release(out_w));
    DEMO(sm_tensor_release(in_w));
    return out;
}

static sm_tensor s2_fresh(sm_tensor img, const demo_config* c, variant_run* vr)
{
    int64_t shape[2], nw = s2_count(c), i, j;
    sm_tensor out, win_view, patches;
    /* Every window materialized (im2col): [nh, nw, win, win] contiguous. */
    win_view = windows_of(img, c);
    DEMO(sm_push_tag("patches"));
    DEMO(sm_clone(win_view, SM_CONTIGUOUS, &patches));
    DEMO(sm_pop_tag());
    DEMO(sm_tensor_release(win_view));
    shape[0] = c->win_img;
    shape[1] = c->win_img;
    DEMO(sm_push_tag("output"));
    DEMO(sm_zeros(shape, 2, SM_FLOAT32, vr->dev, &out));
    DEMO(sm_pop_tag());
    for (i = 0; i < nw; ++i) {
        for (j = 0; j < nw; ++j) {
            sm_tensor src = select_2(patches, i, j);
            sm_tensor dst = view_2d(out, i * c->step, j * c->step, c->win, c->win);
            DEMO(sm_inplace_tensor(dst, SM_OP_ADD, src, s2_gain(i, j)));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(src));
            progress_tick(&vr->prog, i * nw + j + 1);
        }
    }
    /* The peak: the patches and the output, held from the output's creation. */
    at_peak(vr);
    DEMO(sm_tensor_release(patches));
    return out;
}

/* ------------------------------------------------------------------------ */
/* Scenario 3: hidden states in one preallocated [T, B, H] buffer            */
/* ------------------------------------------------------------------------ */

/* h_t = clamp(x_t - 2 * flip_H(h_{t-1}), -64, 64): flip is a view (negative
 * stride), the rest is in place. */
#define S3_LIM 64.0

static void s3_step(sm_tensor cur, sm_tensor prev, sm_tensor x_t)
{
    int32_t last = -1;
    sm_tensor flipped;
    DEMO(sm_flip(prev, &last, 1, &flipped));
    DEMO(sm_copy_into(cur, flipped));
    DEMO(sm_tensor_release(flipped));
    DEMO(sm_inplace_scalar(cur, SM_OP_MUL, -2.0, 0.0));
    DEMO(sm_inplace_tensor(cur, SM_OP_ADD, x_t, 1.0));
    DEMO(sm_inplace_scalar(cur, SM_OP_CLAMP, -S3_LIM, S3_LIM));
}

static sm_tensor s3_views(sm_tensor xs, sm_tensor h0, const demo_config* c, variant_run* vr)
{
    int64_t shape[3], t;
    sm_tensor hs, first;
    shape[0] = c->T;
    shape[1] = c->B;
    shape[2] = c->H;
    DEMO(sm_push_tag("states"));
    DEMO(sm_empty(shape, 3, SM_FLOAT32, vr->dev, &hs));
    DEMO(sm_pop_tag());
    DEMO(sm_select(hs, 0, 0, &first));
    DEMO(sm_copy_into(first, h0));
    DEMO(sm_tensor_release(first));
    for (t = 1; t < c->T; ++t) {
        sm_tensor cur, prev, x_t;
        DEMO(sm_select(hs, 0, t, &cur));
        DEMO(sm_select(hs, 0, t - 1, &prev));
        DEMO(sm_select(xs, 0, t, &x_t));
        s3_step(cur, prev, x_t);
        DEMO(sm_tensor_release(x_t));
        DEMO(sm_tensor_release(prev));
        DEMO(sm_tensor_release(cur));
        progress_tick(&vr->prog, t);
    }
    /* The peak is flat: the one [T, B, H] buffer, which is also the result. */
    at_peak(vr);
    return hs;
}

static sm_tensor s3_fresh(sm_tensor xs, sm_tensor h0, const demo_config* c, variant_run* vr)
{
    int64_t shape[3], t;
    sm_tensor* states = (sm_tensor*)demo_malloc((size_t)c->T * sizeof(sm_tensor));
    sm_tensor hs;
    int64_t bh[2];
    bh[0] = c->B;
    bh[1] = c->H;
    /* A fresh tensor per step, all kept (they are the sequence). */
    DEMO(sm_push_tag("states"));
    DEMO(sm_clone(h0, SM_CONTIGUOUS, &states[0]));
    for (t = 1; t < c->T; ++t) {
        sm_tensor x_t;
        DEMO(sm_empty(bh, 2, SM_FLOAT32, vr->dev, &states[t]));
        DEMO(sm_select(xs, 0, t, &x_t));
        s3_step(states[t], states[t - 1], x_t);
        DEMO(sm_tensor_release(x_t));
        progress_tick(&vr->prog, t);
    }
    DEMO(sm_pop_tag());
    /* Stacked into one [T, B, H] tensor at the end. */
    shape[0] = c->T;
    shape[1] = c->B;
    shape[2] = c->H;
    DEMO(sm_push_tag("output"));
    DEMO(sm_empty(shape, 3, SM_FLOAT32, vr->dev, &hs));
    DEMO(sm_pop_tag());
    /* The peak: every step's state and the tensor they are stacked into;
     * the stacking frees the states one by one. */
    at_peak(vr);
    for (t = 0; t < c->T; ++t) {
        sm_tensor dst;
        DEMO(sm_select(hs, 0, t, &dst));
        DEMO(sm_copy_into(dst, states[t]));
        DEMO(sm_tensor_release(dst));
        DEMO(sm_tensor_release(states[t]));
    }
    free(states);
    return hs;
}

/* ------------------------------------------------------------------------ */
/* Running and reporting                                                    */
/* ------------------------------------------------------------------------ */

static const char* device_name(sm_device dev)
{
    return dev.type == SM_DEVICE_CUDA ? "cuda:0" : "cpu";
}

static void fmt_bytes(char* buf, size_t len, int64_t b)
{
    double v = (double)b;
    if (b >= (int64_t)1 << 30)
        snprintf(buf, len, "%.2f GiB", v / (double)((int64_t)1 << 30));
    else if (b >= (int64_t)1 << 20)
        snprintf(buf, len, "%.1f MiB", v / (double)((int64_t)1 << 20));
    else if (b >= (int64_t)1 << 10)
        snprintf(buf, len, "%.1f KiB", v / 1024.0);
    else
        snprintf(buf, len, "%" PRId64 " B", b);
}

static void print_header(void)
{
    printf("%-8s %-7s %12s %12s %7s %13s %11s %11s  %-5s  %s\n", "scenario", "device",
           "peak views", "peak fresh", "ratio", "allocs v/f", "time views", "time fresh", "check",
           "report");
}

static void print_row(int sc, sm_device dev, const variant_result* v, const variant_result* f,
                      int pass)
{
    char pv[32], pf[32], ratio[32], allocs[48], tv[32], tf[32], report[64];
    fmt_bytes(pv, sizeof pv, v->peak_bytes);
    fmt_bytes(pf, sizeof pf, f->peak_bytes);
    if (v->peak_bytes > 0)
        snprintf(ratio, sizeof ratio, "%.2fx", (double)f->peak_bytes / (double)v->peak_bytes);
    else
        snprintf(ratio, sizeof ratio, "-");
    snprintf(allocs, sizeof allocs, "%" PRId64 "/%" PRId64, v->allocs, f->allocs);
    snprintf(tv, sizeof tv, "%.1f ms", v->ms);
    snprintf(tf, sizeof tf, "%.1f ms", f->ms);
    report_cell(sc, dev, report, sizeof report);
    printf("%-8s %-7s %12s %12s %7s %13s %11s %11s  %-5s  %s\n", k_scenarios[sc].name,
           device_name(dev), pv, pf, ratio, allocs, tv, tf, pass ? "PASS" : "FAIL", report);
    fflush(stdout);
    if (!pass) ++g_failures;
}

/* A scenario's inputs, handed to each variant. */
typedef struct scenario_in {
    const demo_config* c;
    sm_tensor a, b; /* the image (tiles, unfold); xs and h0 (rnn) */
} scenario_in;

typedef sm_tensor (*variant_fn)(const scenario_in* in, variant_run* vr);

static int g_runs = 0; /* timed runs per variant; 0: the size's default */

/* Runs one variant once and checks its result. */
static int run_variant(variant_fn fn, const scenario_in* in, sm_device dev, int sc,
                       const char* variant, int64_t steps, const float* ref, int64_t numel,
                       variant_result* r, int round, int first)
{
    variant_run vr;
    sm_tensor out;
    char what[32];
    int pass;
    variant_begin(&vr, dev, sc, variant, steps, round == 0);
    out = fn(in, &vr);
    variant_end(&vr, r, round, first);
    snprintf(what, sizeof what, "%s/%s", k_scenarios[sc].name, variant);
    pass = check_result(what, out, ref, numel);
    DEMO(sm_tensor_release(out));
    return pass;
}

/* Both variants: the warm-up round, then g_runs timed rounds in alternating
 * order; the reports are written after them, with every run's time. */
static int run_pair(int sc, sm_device dev, const scenario_in* in, variant_fn views,
                    variant_fn fresh, int64_t steps, const float* ref, int64_t numel,
                    variant_result* v, variant_result* f)
{
    int round, pass = 1;
    memset(v, 0, sizeof *v);
    memset(f, 0, sizeof *f);
    for (round = 0; round <= g_runs; ++round) {
        if (views_first(round)) {
            pass &= run_variant(views, in, dev, sc, "views", steps, ref, numel, v, round, 1);
            pass &= run_variant(fresh, in, dev, sc, "fresh", steps, ref, numel, f, round, 0);
        } else {
            pass &= run_variant(fresh, in, dev, sc, "fresh", steps, ref, numel, f, round, 1);
            pass &= run_variant(views, in, dev, sc, "views", steps, ref, numel, v, round, 0);
        }
    }
    v->ms = result_median(v);
    f->ms = result_median(f);
    save_snapshot(sc, "views", dev, v);
    save_snapshot(sc, "fresh", dev, f);
    return pass;
}

static sm_tensor s1_views_fn(const scenario_in* in, variant_run* vr)
{
    return s1_views(in->a, in->c, vr);
}
static sm_tensor s1_fresh_fn(const scenario_in* in, variant_run* vr)
{
    return s1_fresh(in->a, in->c, vr);
}
static sm_tensor s2_views_fn(const scenario_in* in, variant_run* vr)
{
    return s2_views(in->a, in->c, vr);
}
static sm_tensor s2_fresh_fn(const scenario_in* in, variant_run* vr)
{
    return s2_fresh(in->a, in->c, vr);
}
static sm_tensor s3_views_fn(const scenario_in* in, variant_run* vr)
{
    return s3_views(in->a, in->b, in->c, vr);
}
static sm_tensor s3_fresh_fn(const scenario_in* in, variant_run* vr)
{
    return s3_fresh(in->a, in->b, in->c, vr);
}

static float* make_image(int64_t n)
{
    float* h = (float*)demo_malloc((size_t)(n * n) * sizeof(float));
    int64_t i, j;
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j) h[i * n + j] = (float)((i * 31 + j * 17 + (i * j) % 7) % 256);
    return h;
}

static void scenario_tiles(const demo_config* c, sm_device dev)
{
    int64_t n = c->img, numel = n * n, i, shape[2];
    float* host = make_image(n);
    float* ref = (float*)demo_malloc((size_t)numel * sizeof(float));
    sm_tensor img;
    variant_result v, f;
    scenario_in in;
    int pass;
    for (i = 0; i < numel; ++i)
        ref[i] = clampf((host[i] - (float)S1_MEAN) * (float)S1_SCALE, (float)S1_LO, (float)S1_HI);
    shape[0] = n;
    shape[1] = n;
    /* Everything the scenario allocates is tagged "tiles/...". */
    DEMO(sm_push_tag(k_scenarios[SC_TILES].name));
    DEMO(sm_push_tag("input"));
    DEMO(sm_from_host(host, shape, 2, SM_FLOAT32, dev, &img));
    DEMO(sm_pop_tag());
    in.c = c;
    in.a = img;
    pass = run_pair(SC_TILES, dev, &in, s1_views_fn, s1_fresh_fn, s1_count(c), ref, numel, &v, &f);
    DEMO(sm_tensor_release(img));
    DEMO(sm_pop_tag());
    draw_report(SC_TILES, c);
    print_row(SC_TILES, dev, &v, &f, pass);
    free(ref);
    free(host);
}

static void scenario_unfold(const demo_config* c, sm_device dev)
{
    int64_t n = c->win_img, numel = n * n, nw = s2_count(c), shape[2], i, j, a, b;
    float* host = make_image(n);
    float* ref = (float*)demo_malloc((size_t)numel * sizeof(float));
    sm_tensor img;
    variant_result v, f;
    scenario_in in;
    int pass;
    memset(ref, 0, (size_t)numel * sizeof(float));
    for (i = 0; i < nw; ++i)
        for (j = 0; j < nw; ++j) {
            float g = (float)s2_gain(i, j);
            for (a = 0; a < c->win; ++a)
                for (b = 0; b < c->win; ++b) {
                    int64_t p = (i * c->step + a) * n + j * c->step + b;
                    ref[p] += g * host[p];
                }
        }
    shape[0] = n;
    shape[1] = n;
    DEMO(sm_push_tag(k_scenarios[SC_UNFOLD].name));
    DEMO(sm_push_tag("input"));
    DEMO(sm_from_host(host, shape, 2, SM_FLOAT32, dev, &img));
    DEMO(sm_pop_tag());
    in.c = c;
    in.a = img;
    pass = run_pair(SC_UNFOLD, dev, &in, s2_views_fn, s2_fresh_fn, nw * nw, ref, numel, &v, &f);
    DEMO(sm_tensor_release(img));
    DEMO(sm_pop_tag());
    draw_report(SC_UNFOLD, c);
    print_row(SC_UNFOLD, dev, &v, &f, pass);
    free(ref);
    free(host);
}

static void scenario_rnn(const demo_config* c, sm_device dev)
{
    int64_t T = c->T, B = c->B, H = c->H, numel = T * B * H, bh = B * H, t, b, k;
    int64_t shape[3];
    float* xs_h = (float*)demo_malloc((size_t)numel * sizeof(float));
    float* ref = (float*)demo_malloc((size_t)numel * sizeof(float));
    sm_tensor xs, h0;
    variant_result v, f;
    scenario_in in;
    int pass;
    for (k = 0; k < numel; ++k) xs_h[k] = (float)((k * 7 + k / 13) % 41 - 20);
    /* h0 = xs[0] reduced to [-8, 8]; ref[0] = h0. */
    for (k = 0; k < bh; ++k) ref[k] = (float)((k * 5) % 17 - 8);
    for (t = 1; t < T; ++t)
        for (b = 0; b < B; ++b)
            for (k = 0; k < H; ++k) {
                float prev = ref[(t - 1) * bh + b * H + (H - 1 - k)];
                float x = xs_h[t * bh + b * H + k];
                ref[t * bh + b * H + k] = clampf(x - 2.0f * prev, (float)-S3_LIM, (float)S3_LIM);
            }
    shape[0] = T;
    shape[1] = B;
    shape[2] = H;
    DEMO(sm_push_tag(k_scenarios[SC_RNN].name));
    DEMO(sm_push_tag("input"));
    DEMO(sm_from_host(xs_h, shape, 3, SM_FLOAT32, dev, &xs));
    DEMO(sm_from_host(ref, shape + 1, 2, SM_FLOAT32, dev, &h0)); /* ref[0] is h0 */
    DEMO(sm_pop_tag());

    in.c = c;
    in.a = xs;
    in.b = h0;
    pass = run_pair(SC_RNN, dev, &in, s3_views_fn, s3_fresh_fn, T - 1, ref, numel, &v, &f);

    DEMO(sm_tensor_release(h0));
    DEMO(sm_tensor_release(xs));
    DEMO(sm_pop_tag());
    draw_report(SC_RNN, c);
    print_row(SC_RNN, dev, &v, &f, pass);
    free(ref);
    free(xs_h);
}

/* Starts what a first call starts (worker threads, a CUDA context, the
 * allocator's pools) so that the first timed variant does not pay for it. */
static void warm_up(sm_device dev)
{
    int64_t shape[2] = {1024, 1024};
    sm_tensor a, t, b;
    DEMO(sm_full(shape, 2, 1.0, SM_FLOAT32, dev, &a));
    DEMO(sm_transpose(a, 0, 1, &t));
    DEMO(sm_clone(t, SM_CONTIGUOUS, &b));
    DEMO(sm_inplace_scalar(b, SM_OP_MUL, 2.0, 0.0));
    DEMO(sm_tensor_release(b));
    DEMO(sm_tensor_release(t));
    DEMO(sm_tensor_release(a));
    DEMO(sm_synchronize(dev));
}

static void run_device(const demo_config* c, sm_device dev)
{
    warm_up(dev);
    scenario_tiles(c, dev);
    scenario_unfold(c, dev);
    scenario_rnn(c, dev);
    DEMO(sm_empty_cache(dev));
}

/* 1 if CUDA device 0 is usable; otherwise prints why, from the failing call. */
static int cuda_usable(void)
{
    int32_t count = 0;
    sm_status st = sm_cuda_device_count(&count);
    sm_device cuda;
    sm_tensor probe;
    int64_t one = 1;
    if (st != SM_OK) {
        printf("cuda: skipped: sm_cuda_device_count failed: %s: %s\n", sm_status_string(st),
               sm_last_error());
        return 0;
    }
    if (count > 0) return 1;
    /* No device: ask for one anyway so the library says why. */
    cuda.type = SM_DEVICE_CUDA;
    cuda.index = 0;
    st = sm_empty(&one, 1, SM_FLOAT32, cuda, &probe);
    if (st == SM_OK) {
        DEMO(sm_tensor_release(probe));
        printf("cuda: skipped: sm_cuda_device_count() = 0 (yet sm_empty on cuda:0 worked)\n");
    } else {
        printf("cuda: skipped: sm_cuda_device_count() = 0; sm_empty on cuda:0 -> %s: %s\n",
               sm_status_string(st), sm_last_error());
    }
    return 0;
}

static void usage(FILE* f)
{
    fprintf(f,
            "usage: stridemem-demo [--device cpu|cuda] [--size small|large] [--runs N]\n"
            "                      [--out DIR | --no-report] [--quiet]\n"
            "  no --device: cpu, then cuda when a GPU is usable\n"
            "  --out DIR: memory snapshots (JSON) and a page per scenario (HTML) go there\n"
            "             (default ./stridemem-demo-out); --no-report: no files\n"
            "  --runs N: timed runs per variant, after a warm-up (1 to 99; default %d for\n"
            "            small, %d for large); the times shown are their median\n"
            "  --quiet: no progress on stderr\n"
            "  STRIDEMEM_MEMVIZ: the memviz.py that draws the pages (default: the source tree's)\n",
            DEFAULT_RUNS_SMALL, DEFAULT_RUNS_LARGE);
}

int main(int argc, char** argv)
{
    const demo_config* cfg = &k_large;
    const char* device_opt = NULL;
    const char* out_dir = "stridemem-demo-out";
    const char* env;
    int major, minor, patch, i, run_cpu, run_cuda, quiet = 0;
    int64_t live_t, live_s, live_st;
    sm_device cpu, cuda;
    cpu.type = SM_DEVICE_CPU;
    cpu.index = 0;
    cuda.type = SM_DEVICE_CUDA;
    cuda.index = 0;
    g_report.enabled = 1;

    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            device_opt = argv[++i];
            if (strcmp(device_opt, "cpu") != 0 && strcmp(device_opt, "cuda") != 0) {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            ++i;
            if (strcmp(argv[i], "small") == 0)
                cfg = &k_small;
            else if (strcmp(argv[i], "large") == 0)
                cfg = &k_large;
            else {
                usage(stderr);
                return 2;
            }
        } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (strcmp(argv[i], "--no-report") == 0) {
            g_report.enabled = 0;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            char* end = NULL;
            long n = strtol(argv[++i], &end, 10);
            if (end == argv[i] || *end != '\0' || n < 1 || n > MAX_RUNS) {
                fprintf(stderr, "stridemem-demo: --runs takes 1 to %d, not '%s'\n", MAX_RUNS,
                        argv[i]);
                usage(stderr);
                return 2;
            }
            g_runs = (int)n;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    /* A terminal gets one line redrawn in place; a log gets a few lines. */
    g_progress_mode = quiet ? PROGRESS_OFF
                            : (isatty(STDERR_FILENO) ? PROGRESS_TTY : PROGRESS_LINES);
    env = getenv("STRIDEMEM_MEMVIZ");
    g_report.memviz = env != NULL && env[0] != '\0' ? env : MEMVIZ_DEFAULT;

    DEMO(sm_version(&major, &minor, &patch));
    printf("stridemem %d.%d.%d (header %d.%d.%d), size %s\n", major, minor, patch,
           SM_VERSION_MAJOR, SM_VERSION_MINOR, SM_VERSION_PATCH, cfg->name);
    printf("  tiles : %" PRId64 "x%" PRId64 " float32 image, %" PRId64 "x%" PRId64
           " tiles through one stack-of-views buffer (sub, mul, clamp in place)\n"
           "          vs a copy + a fresh output per tile, assembled at the end\n",
           cfg->img, cfg->img, cfg->tile, cfg->tile);
    printf("  unfold: %" PRId64 "x%" PRId64 " image, %" PRId64 "x%" PRId64
           " windows step %" PRId64 " via sm_unfold on both dims, weighted overlap-add\n"
           "          vs every window materialized with sm_clone (im2col)\n",
           cfg->win_img, cfg->win_img, cfg->win, cfg->win, cfg->step);
    printf("  rnn   : h_t = clamp(x_t - 2*flip(h_{t-1})), T=%" PRId64 " B=%" PRId64 " H=%" PRId64
           " in one [T,B,H] buffer via sm_select\n"
           "          vs a fresh tensor per step, stacked at the end\n",
           cfg->T, cfg->B, cfg->H);
    if (g_runs == 0) g_runs = cfg == &k_small ? DEFAULT_RUNS_SMALL : DEFAULT_RUNS_LARGE;
    printf("  peak = peak allocated bytes on the device during the work, above the inputs;\n"
           "  allocs = storage allocations (views/fresh); results checked against host code;\n"
           "  time = median of %d timed runs after an untimed warm-up run, the order of the\n"
           "  variants alternating (views first in odd runs, fresh first in even runs)\n",
           g_runs);

    run_cpu = device_opt == NULL || strcmp(device_opt, "cpu") == 0;
    run_cuda = 0;
    if (device_opt == NULL || strcmp(device_opt, "cuda") == 0) {
        run_cuda = cuda_usable();
        if (!run_cuda && device_opt != NULL) return DEMO_SKIPPED;
    }
    if (g_report.enabled) {
        prepare_out_dir(out_dir);
        printf("  report = memory snapshots at each variant's peak (JSON) and a page per\n"
               "  scenario drawing them side by side (HTML), in %s\n",
               g_report.dir);
    }
    printf("\n");

    print_header();
    if (run_cpu) run_device(cfg, cpu);
    if (run_cuda) run_device(cfg, cuda);

    DEMO(sm_debug_live_handles(&live_t, &live_s, &live_st));
    if (live_t != 0 || live_s != 0 || live_st != 0) {
        fprintf(stderr,
                "stridemem-demo: leak: %" PRId64 " tensors, %" PRId64 " storages, %" PRId64
                " stacks still live\n",
                live_t, live_s, live_st);
        ++g_failures;
    } else {
        printf("\nleak check: 0 live tensors, storages and stacks\n");
    }
    print_reports();
    if (g_failures) {
        fprintf(stderr, "stridemem-demo: %d failure(s)\n", g_failures);
        return 1;
    }
    return 0;
}
