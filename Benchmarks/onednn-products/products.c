// kb's bf16 products as kb makes them on oneDNN (the row count left to run time, which oneDNN
// runs on its generic "gemm:jit" path) against products made for their exact row count (which
// oneDNN runs on its blocked "brg" kernels), for multilingual-e5-small's four shapes at a pass's
// and a query's row counts, on one thread, each the best of many runs with warm caches.
// scripts/bench/bench-onednn-products.sh compiles and runs it. Prints one JSON object a line:
// {"k", "n", "rows", "runtime_impl", "runtime_ms", "fixed_impl", "fixed_ms"}.
// (2026-11-29, AMD EPYC: the fixed products 1–6% faster at 2,048 rows and 15–35% at 12–33 rows
// here, but kb's whole passes were not faster with them — see docs/benchmarks.md.)
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void omp_set_num_threads(int);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        dnnl_status_t status_ = (call);                                                                \
        if (status_ != dnnl_success) {                                                                 \
            fprintf(stderr, "products: %s failed (oneDNN status %d)\n", #call, (int)status_);          \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static dnnl_engine_t engine;
static dnnl_stream_t stream;
static char scratchpad[1 << 22] __attribute__((aligned(64)));

typedef struct {
    dnnl_primitive_t primitive;
    dnnl_memory_t weights;
    size_t scratchpad_bytes;
    const char *impl;
} product;

// rows < 0: left to run time, as kb_matmul_create makes its products.
static product make(long rows, long k, long n) {
    dnnl_dims_t src_dims = {rows < 0 ? DNNL_RUNTIME_DIM_VAL : rows, k}, weight_dims = {k, n};
    dnnl_dims_t dst_dims = {rows < 0 ? DNNL_RUNTIME_DIM_VAL : rows, n};
    dnnl_memory_desc_t src, weights, dst;
    CHECK(dnnl_memory_desc_init_by_tag(&src, 2, src_dims, dnnl_bf16, dnnl_ab));
    CHECK(dnnl_memory_desc_init_by_tag(&weights, 2, weight_dims, dnnl_bf16, dnnl_format_tag_any));
    CHECK(dnnl_memory_desc_init_by_tag(&dst, 2, dst_dims, dnnl_f32, dnnl_ab));
    dnnl_matmul_desc_t desc;
    CHECK(dnnl_matmul_desc_init(&desc, &src, &weights, NULL, &dst));
    dnnl_primitive_attr_t attr;
    CHECK(dnnl_primitive_attr_create(&attr));
    CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    dnnl_primitive_desc_t pd;
    CHECK(dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL));
    dnnl_primitive_attr_destroy(attr);
    product p;
    CHECK(dnnl_primitive_create(&p.primitive, pd));
    CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &p.impl));
    const dnnl_memory_desc_t *layout = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    p.scratchpad_bytes = dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
    if (p.scratchpad_bytes > sizeof(scratchpad)) {
        fprintf(stderr, "products: oneDNN asks %zu bytes of scratchpad\n", p.scratchpad_bytes);
        exit(1);
    }
    CHECK(dnnl_memory_create(&p.weights, layout, engine, DNNL_MEMORY_ALLOCATE));
    void *handle;
    CHECK(dnnl_memory_get_data_handle(p.weights, &handle));
    uint16_t *w = handle;
    for (size_t i = 0; i < dnnl_memory_desc_get_size(layout) / 2; i++) w[i] = (uint16_t)(0x3c00 + (i * 7919) % 0x700);
    return p;
}

// The best of `runs` runs of `p` over `rows` rows, in ms.
static double time_product(const product *p, long rows, long k, long n, const uint16_t *x, float *out, int runs) {
    dnnl_dims_t src_dims = {rows, k}, dst_dims = {rows, n}, pad_dims = {p->scratchpad_bytes ? (long)p->scratchpad_bytes : 1};
    dnnl_memory_desc_t src_md, dst_md, pad_md;
    CHECK(dnnl_memory_desc_init_by_tag(&src_md, 2, src_dims, dnnl_bf16, dnnl_ab));
    CHECK(dnnl_memory_desc_init_by_tag(&dst_md, 2, dst_dims, dnnl_f32, dnnl_ab));
    CHECK(dnnl_memory_desc_init_by_tag(&pad_md, 1, pad_dims, dnnl_u8, dnnl_a));
    dnnl_memory_t src, dst, pad;
    CHECK(dnnl_memory_create(&src, &src_md, engine, (void *)x));
    CHECK(dnnl_memory_create(&dst, &dst_md, engine, out));
    CHECK(dnnl_memory_create(&pad, &pad_md, engine, scratchpad));
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, pad}};
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        CHECK(dnnl_primitive_execute(p->primitive, stream, p->scratchpad_bytes ? 4 : 3, args));
        CHECK(dnnl_stream_wait(stream));
        double t = now() - t0;
        if (t < best) best = t;
    }
    dnnl_memory_destroy(src);
    dnnl_memory_destroy(dst);
    dnnl_memory_destroy(pad);
    return best * 1e3;
}

int main(void) {
    omp_set_num_threads(1);
    CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    const long shapes[4][2] = {{384, 1152}, {384, 384}, {384, 1536}, {1536, 384}};   // k, n: QKV, output, up, down
    const long counts[] = {2048, 2000, 480, 33, 20, 12};
    uint16_t *x = aligned_alloc(64, 2048 * 1536 * 2);
    float *out = aligned_alloc(64, 2048 * 1536 * 4);
    for (long i = 0; i < 2048 * 1536; i++) x[i] = (uint16_t)(0x3c00 + (i * 104729) % 0x700);
    for (int s = 0; s < 4; s++) {
        const long k = shapes[s][0], n = shapes[s][1];
        product runtime = make(-1, k, n);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            const long rows = counts[c];
            const int runs = rows > 100 ? 30 : 500;
            product fixed = make(rows, k, n);
            double a = time_product(&runtime, rows, k, n, x, out, runs), b = time_product(&fixed, rows, k, n, x, out, runs);
            printf("{\"k\":%ld,\"n\":%ld,\"rows\":%ld,\"runtime_impl\":\"%s\",\"runtime_ms\":%.4f,\"fixed_impl\":\"%s\",\"fixed_ms\":%.4f}\n",
                   k, n, rows, runtime.impl, a, fixed.impl, b);
            dnnl_primitive_destroy(fixed.primitive);
            dnnl_memory_destroy(fixed.weights);
        }
        dnnl_primitive_destroy(runtime.primitive);
        dnnl_memory_destroy(runtime.weights);
    }
    free(x);
    free(out);
    return 0;
}
