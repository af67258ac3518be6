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
 * before it: the inputs), the number of storage allocations, the time, and
 * the check.
 *
 * Usage: stridemem-demo [--device cpu|cuda] [--size small|large]
 *   no --device: CPU, then CUDA when sm_cuda_device_count() > 0 (otherwise
 *   one line says why CUDA was skipped).
 *   --device cuda with no usable GPU exits with 77 (a "skipped" code).
 * Exit status: 0 when every check passes and nothing leaks, 1 otherwise,
 * 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200112L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stridemem.h"

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

static void* demo_malloc(size_t n)
{
    void* p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "stridemem-demo: out of host memory (%lu bytes)\n", (unsigned long)n);
        exit(1);
    }
    return p;
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

/* ------------------------------------------------------------------------ */
/* Measurement                                                              */
/* ------------------------------------------------------------------------ */

typedef struct variant_result {
    int64_t peak_bytes; /* peak allocated above the baseline */
    int64_t allocs;     /* storage allocations served        */
    double ms;
} variant_result;

typedef struct meter {
    sm_device dev;
    int64_t base_allocated;
    int64_t base_allocs;
    double t0;
} meter;

static void read_stats(sm_device dev, sm_memory_stats_t* st)
{
    memset(st, 0, sizeof *st);
    st->struct_size = (uint32_t)sizeof *st;
    DEMO(sm_memory_stats(dev, st));
}

/* Cached blocks go back to the system and peaks restart, so the two variants
 * start from the same state. */
static void meter_start(meter* m, sm_device dev)
{
    sm_memory_stats_t st;
    m->dev = dev;
    DEMO(sm_synchronize(dev));
    DEMO(sm_empty_cache(dev));
    DEMO(sm_reset_peak_stats(dev));
    read_stats(dev, &st);
    m->base_allocated = st.allocated_bytes;
    m->base_allocs = st.num_allocs;
    m->t0 = now_ms();
}

static void meter_stop(const meter* m, variant_result* r)
{
    sm_memory_stats_t st;
    DEMO(sm_synchronize(m->dev));
    r->ms = now_ms() - m->t0;
    read_stats(m->dev, &st);
    r->peak_bytes = st.peak_allocated_bytes - m->base_allocated;
    r->allocs = st.num_allocs - m->base_allocs;
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

static sm_tensor s1_views(sm_tensor img, const demo_config* c, sm_device dev)
{
    int64_t shape[2];
    int64_t r, col;
    sm_tensor out;
    sm_stack stack;
    shape[0] = c->img;
    shape[1] = c->img;
    DEMO(sm_empty(shape, 2, SM_FLOAT32, dev, &out));
    /* One buffer for one tile, reused for every tile. */
    DEMO(sm_stack_create(dev, c->tile * c->tile * (int64_t)sizeof(float) + SM_STACK_ALIGNMENT,
                         &stack));
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
        }
    }
    DEMO(sm_stack_release(stack));
    return out;
}

static sm_tensor s1_fresh(sm_tensor img, const demo_config* c, sm_device dev)
{
    int64_t per_side = (c->img + c->tile - 1) / c->tile;
    int64_t n = per_side * per_side, k = 0, r, col;
    int64_t shape[2];
    sm_tensor* results = (sm_tensor*)demo_malloc((size_t)n * sizeof(sm_tensor));
    sm_tensor out;
    /* A copy of each tile, and a fresh output per tile. */
    for (r = 0; r < c->img; r += c->tile) {
        for (col = 0; col < c->img; col += c->tile) {
            sm_tensor src = view_2d(img, r, col, min64(c->tile, c->img - r),
                                    min64(c->tile, c->img - col));
            sm_tensor in;
            DEMO(sm_contiguous(src, SM_CONTIGUOUS, &in, NULL));
            DEMO(sm_clone(in, SM_CONTIGUOUS, &results[k]));
            s1_normalize(results[k]);
            DEMO(sm_tensor_release(in));
            DEMO(sm_tensor_release(src));
            ++k;
        }
    }
    /* The tiles are assembled into the output image at the end. */
    shape[0] = c->img;
    shape[1] = c->img;
    DEMO(sm_empty(shape, 2, SM_FLOAT32, dev, &out));
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

static int64_t s2_count(const demo_config* c) { return (c->win_img - c->win) / c->step + 1; }

static sm_tensor s2_views(sm_tensor img, const demo_config* c, sm_device dev)
{
    int64_t shape[2], nw = s2_count(c), i, j;
    sm_tensor out, in_w, out_w;
    shape[0] = c->win_img;
    shape[1] = c->win_img;
    DEMO(sm_zeros(shape, 2, SM_FLOAT32, dev, &out));
    in_w = windows_of(img, c);
    out_w = windows_of(out, c); /* overlapping, but each window alone is not */
    for (i = 0; i < nw; ++i) {
        for (j = 0; j < nw; ++j) {
            sm_tensor src = select_2(in_w, i, j), dst = select_2(out_w, i, j);
            DEMO(sm_inplace_tensor(dst, SM_OP_ADD, src, s2_gain(i, j)));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(src));
        }
    }
    DEMO(sm_tensor_release(out_w));
    DEMO(sm_tensor_release(in_w));
    return out;
}

static sm_tensor s2_fresh(sm_tensor img, const demo_config* c, sm_device dev)
{
    int64_t shape[2], nw = s2_count(c), i, j;
    sm_tensor out, win_view, patches;
    /* Every window materialized (im2col): [nh, nw, win, win] contiguous. */
    win_view = windows_of(img, c);
    DEMO(sm_clone(win_view, SM_CONTIGUOUS, &patches));
    DEMO(sm_tensor_release(win_view));
    shape[0] = c->win_img;
    shape[1] = c->win_img;
    DEMO(sm_zeros(shape, 2, SM_FLOAT32, dev, &out));
    for (i = 0; i < nw; ++i) {
        for (j = 0; j < nw; ++j) {
            sm_tensor src = select_2(patches, i, j);
            sm_tensor dst = view_2d(out, i * c->step, j * c->step, c->win, c->win);
            DEMO(sm_inplace_tensor(dst, SM_OP_ADD, src, s2_gain(i, j)));
            DEMO(sm_tensor_release(dst));
            DEMO(sm_tensor_release(src));
        }
    }
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

static sm_tensor s3_views(sm_tensor xs, sm_tensor h0, const demo_config* c, sm_device dev)
{
    int64_t shape[3], t;
    sm_tensor hs, first;
    shape[0] = c->T;
    shape[1] = c->B;
    shape[2] = c->H;
    DEMO(sm_empty(shape, 3, SM_FLOAT32, dev, &hs));
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
    }
    return hs;
}

static sm_tensor s3_fresh(sm_tensor xs, sm_tensor h0, const demo_config* c, sm_device dev)
{
    int64_t shape[3], t;
    sm_tensor* states = (sm_tensor*)demo_malloc((size_t)c->T * sizeof(sm_tensor));
    sm_tensor hs;
    int64_t bh[2];
    bh[0] = c->B;
    bh[1] = c->H;
    /* A fresh tensor per step, all kept (they are the sequence). */
    DEMO(sm_clone(h0, SM_CONTIGUOUS, &states[0]));
    for (t = 1; t < c->T; ++t) {
        sm_tensor x_t;
        DEMO(sm_empty(bh, 2, SM_FLOAT32, dev, &states[t]));
        DEMO(sm_select(xs, 0, t, &x_t));
        s3_step(states[t], states[t - 1], x_t);
        DEMO(sm_tensor_release(x_t));
    }
    /* Stacked into one [T, B, H] tensor at the end. */
    shape[0] = c->T;
    shape[1] = c->B;
    shape[2] = c->H;
    DEMO(sm_empty(shape, 3, SM_FLOAT32, dev, &hs));
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

static int g_failures = 0;

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
    printf("%-8s %-7s %12s %12s %7s %13s %11s %11s  %s\n", "scenario", "device", "peak views",
           "peak fresh", "ratio", "allocs v/f", "time views", "time fresh", "check");
}

static void print_row(const char* scenario, sm_device dev, const variant_result* v,
                      const variant_result* f, int pass)
{
    char pv[32], pf[32], ratio[32], allocs[32], tv[32], tf[32];
    fmt_bytes(pv, sizeof pv, v->peak_bytes);
    fmt_bytes(pf, sizeof pf, f->peak_bytes);
    if (v->peak_bytes > 0)
        snprintf(ratio, sizeof ratio, "%.2fx", (double)f->peak_bytes / (double)v->peak_bytes);
    else
        snprintf(ratio, sizeof ratio, "-");
    snprintf(allocs, sizeof allocs, "%" PRId64 "/%" PRId64, v->allocs, f->allocs);
    snprintf(tv, sizeof tv, "%.1f ms", v->ms);
    snprintf(tf, sizeof tf, "%.1f ms", f->ms);
    printf("%-8s %-7s %12s %12s %7s %13s %11s %11s  %s\n", scenario, device_name(dev), pv, pf,
           ratio, allocs, tv, tf, pass ? "PASS" : "FAIL");
    fflush(stdout);
    if (!pass) ++g_failures;
}

typedef sm_tensor (*s12_fn)(sm_tensor img, const demo_config* c, sm_device dev);

/* Runs one variant of scenario 1 or 2 and checks it. */
static int run_variant_2d(s12_fn fn, sm_tensor img, const demo_config* c, sm_device dev,
                          const float* ref, int64_t numel, const char* what,
                          variant_result* r)
{
    meter m;
    sm_tensor out;
    int pass;
    meter_start(&m, dev);
    out = fn(img, c, dev);
    meter_stop(&m, r);
    pass = check_result(what, out, ref, numel);
    DEMO(sm_tensor_release(out));
    return pass;
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
    int pass;
    for (i = 0; i < numel; ++i)
        ref[i] = clampf((host[i] - (float)S1_MEAN) * (float)S1_SCALE, (float)S1_LO, (float)S1_HI);
    shape[0] = n;
    shape[1] = n;
    DEMO(sm_from_host(host, shape, 2, SM_FLOAT32, dev, &img));
    pass = run_variant_2d(s1_views, img, c, dev, ref, numel, "tiles/views", &v);
    pass &= run_variant_2d(s1_fresh, img, c, dev, ref, numel, "tiles/fresh", &f);
    DEMO(sm_tensor_release(img));
    print_row("tiles", dev, &v, &f, pass);
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
    DEMO(sm_from_host(host, shape, 2, SM_FLOAT32, dev, &img));
    pass = run_variant_2d(s2_views, img, c, dev, ref, numel, "unfold/views", &v);
    pass &= run_variant_2d(s2_fresh, img, c, dev, ref, numel, "unfold/fresh", &f);
    DEMO(sm_tensor_release(img));
    print_row("unfold", dev, &v, &f, pass);
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
    meter m;
    sm_tensor out;
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
    DEMO(sm_from_host(xs_h, shape, 3, SM_FLOAT32, dev, &xs));
    DEMO(sm_from_host(ref, shape + 1, 2, SM_FLOAT32, dev, &h0)); /* ref[0] is h0 */

    meter_start(&m, dev);
    out = s3_views(xs, h0, c, dev);
    meter_stop(&m, &v);
    pass = check_result("rnn/views", out, ref, numel);
    DEMO(sm_tensor_release(out));

    meter_start(&m, dev);
    out = s3_fresh(xs, h0, c, dev);
    meter_stop(&m, &f);
    pass &= check_result("rnn/fresh", out, ref, numel);
    DEMO(sm_tensor_release(out));

    DEMO(sm_tensor_release(h0));
    DEMO(sm_tensor_release(xs));
    print_row("rnn", dev, &v, &f, pass);
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
            "usage: stridemem-demo [--device cpu|cuda] [--size small|large]\n"
            "  no --device: cpu, then cuda when a GPU is usable\n");
}

int main(int argc, char** argv)
{
    const demo_config* cfg = &k_large;
    const char* device_opt = NULL;
    int major, minor, patch, i, run_cpu, run_cuda;
    int64_t live_t, live_s, live_st;
    sm_device cpu, cuda;
    cpu.type = SM_DEVICE_CPU;
    cpu.index = 0;
    cuda.type = SM_DEVICE_CUDA;
    cuda.index = 0;

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
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

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
    printf("  peak = peak allocated bytes on the device during the work, above the inputs;\n"
           "  allocs = storage allocations (views/fresh); results checked against host code\n\n");

    run_cpu = device_opt == NULL || strcmp(device_opt, "cpu") == 0;
    run_cuda = 0;
    if (device_opt == NULL || strcmp(device_opt, "cuda") == 0) {
        run_cuda = cuda_usable();
        if (!run_cuda && device_opt != NULL) return DEMO_SKIPPED;
    }

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
    if (g_failures) {
        fprintf(stderr, "stridemem-demo: %d failure(s)\n", g_failures);
        return 1;
    }
    return 0;
}
