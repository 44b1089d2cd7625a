// Reduced-precision linear layers on oneDNN: bf16 (AVX-512 BF16) and int8 (VNNI) matrix products
// chosen for the CPU at run time by oneDNN.
//
// bf16: inputs and weights rounded to bfloat16, products summed in fp32, then one pass over the
// result: the bias, GELU where asked, and — for a product read by another bf16 product — the
// rounding to bf16 in place, so that the next product reads it without a conversion pass of its
// own. (Measured, 2,000 of the Octave manual's snippets embedded by multilingual-e5-small in
// throughput mode: handing the feed-forward expansion over in bf16 saves 3%; the bias in oneDNN's
// kernel saved nothing more, and oneDNN's GELU post-op was slower than kb's pass.)
// int8: weights quantised once per output column (symmetric, s8); each input row quantised on its
// own (asymmetric, u8 with a zero point), so a row's result never depends on the other rows of
// the pass. The product is exact in int32; the epilogue undoes both scales and the zero point:
//     out[r][c] = sx[r]·sw[c]·(acc[r][c] − zx[r]·Σₖ qw[c][k]) + bias[c]
#include "kb_encoder.h"
#include "kb_vector_math.h"
#include <dlfcn.h>
#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>
#endif
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_matmul {
    kb_precision precision;
    kb_activation activation;
    int bf16_output;              // bf16 only: the result is written as bf16
    int wide;                     // AVX-512 element-wise steps (decided once, at creation)
    int convert;                  // the CPU's bf16 conversion instruction (AVX-512 BF16)
    size_t n, k;
    dnnl_primitive_t primitive;
    dnnl_memory_desc_t weights_md;
    dnnl_memory_t weights;        // reordered into the layout the primitive asked for
    size_t scratchpad_bytes;      // oneDNN's own working memory, supplied by the caller's scratch
    float *column_scales;         // int8: sw[c]
    int32_t *column_sums;         // int8: Σₖ qw[c][k]
    float *input_scales;          // int8: what each input column is multiplied by before quantising
};

// `value` rounded to bfloat16, to nearest even (NaN stays NaN). Branch-free, so loops over it vectorise.
static inline __attribute__((always_inline)) uint16_t bf16_round(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    uint32_t nan = (bits & 0x7fffffffu) > 0x7f800000u;
    uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    return (uint16_t)(nan ? (bits >> 16) | 0x40u : rounded);
}

static dnnl_engine_t engine;
static char engine_error[128];

static void make_engine(void) {
    dnnl_status_t status = dnnl_engine_create(&engine, dnnl_cpu, 0);
    if (status != dnnl_success) {
        engine = NULL;
        snprintf(engine_error, sizeof(engine_error), "oneDNN could not create a CPU engine (status %d)", (int)status);
    }
}

static dnnl_engine_t cpu_engine(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_engine);
    return engine;
}

// Each thread that runs products keeps a stream of its own.
static _Thread_local dnnl_stream_t thread_stream;

static dnnl_stream_t stream_for_thread(void) {
    if (!thread_stream && cpu_engine()) dnnl_stream_create(&thread_stream, cpu_engine(), dnnl_stream_default_flags);
    return thread_stream;
}

// oneDNN runs on OpenMP; the team size is per calling thread. Looked up at run time, so that kb
// does not link the OpenMP runtime itself (libdnnl does).
static void set_threads(int threads) {
    static void (*set)(int) = NULL;
    static int looked = 0;
    if (!looked) {
        set = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
        looked = 1;
    }
    if (set) set(threads < 1 ? 1 : threads);
}

int kb_precision_supported(kb_precision precision) {
    switch (precision) {
    case KB_PRECISION_FP32: return 1;
#if defined(__x86_64__) && defined(__clang__)
    case KB_PRECISION_BF16:
        __builtin_cpu_init();
        return kb_variant_supported(KB_VARIANT_AVX512) && __builtin_cpu_supports("avx512bf16") && cpu_engine() != NULL;
    case KB_PRECISION_INT8:
        __builtin_cpu_init();
        return kb_variant_supported(KB_VARIANT_AVX512) && __builtin_cpu_supports("avx512vnni") && cpu_engine() != NULL;
#endif
    default: return 0;
    }
}

static void set_error(char *error, size_t size, const char *what, dnnl_status_t status) {
    if (error && size) snprintf(error, size, "%s (oneDNN status %d)", what, (int)status);
}

#define TRY(call, what)                                                                                \
    do {                                                                                               \
        dnnl_status_t status_ = (call);                                                                \
        if (status_ != dnnl_success) {                                                                 \
            set_error(error, error_size, what, status_);                                               \
            goto fail;                                                                                 \
        }                                                                                              \
    } while (0)

kb_matmul *kb_matmul_create(kb_precision precision, const float *weight, size_t n, size_t k, const float *input_scales,
                            kb_activation activation, int bf16_output, char *error, size_t error_size) {
    if (precision != KB_PRECISION_BF16 && precision != KB_PRECISION_INT8) {
        set_error(error, error_size, "only bf16 and int8 products run on oneDNN", dnnl_invalid_arguments);
        return NULL;
    }
    dnnl_engine_t cpu = cpu_engine();
    if (!cpu) {
        if (error && error_size) snprintf(error, error_size, "%s", engine_error);
        return NULL;
    }
    kb_matmul *m = calloc(1, sizeof(*m));
    void *raw = NULL;
    dnnl_primitive_desc_t pd = NULL, reorder_pd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_memory_t source = NULL;
    dnnl_stream_t stream = NULL;
    if (!m) return NULL;
    m->precision = precision;
    m->activation = activation;
    m->bf16_output = precision == KB_PRECISION_BF16 && bf16_output;
    m->wide = kb_variant_supported(KB_VARIANT_AVX512);
#if defined(__x86_64__) && defined(__clang__)
    __builtin_cpu_init();
    m->convert = m->wide && __builtin_cpu_supports("avx512bf16");
#endif
    m->n = n;
    m->k = k;
    const int int8 = precision == KB_PRECISION_INT8;
    const dnnl_data_type_t wtype = int8 ? dnnl_s8 : dnnl_bf16, stype = int8 ? dnnl_u8 : dnnl_bf16;
    const dnnl_data_type_t dtype = int8 ? dnnl_s32 : dnnl_f32;

    // The weights as kb holds them, [n × k] row-major, are the [k × n] matrix in `ba` order.
    raw = malloc(n * k * (int8 ? 1 : 2));
    if (!raw) goto fail;
    if (int8) {
        m->column_scales = malloc(n * sizeof(float));
        m->column_sums = malloc(n * sizeof(int32_t));
        m->input_scales = malloc(k * sizeof(float));
        if (!m->column_scales || !m->column_sums || !m->input_scales) goto fail;
        for (size_t i = 0; i < k; i++) m->input_scales[i] = input_scales ? input_scales[i] : 1.0f;
        int8_t *q = raw;
        for (size_t c = 0; c < n; c++) {
            const float *row = weight + c * k;
            float largest = 0;
            for (size_t i = 0; i < k; i++) largest = fmaxf(largest, fabsf(row[i]));
            float scale = largest > 0 ? largest / 127.0f : 1.0f;
            int32_t sum = 0;
            for (size_t i = 0; i < k; i++) {
                long v = lrintf(row[i] / scale);
                v = v < -127 ? -127 : v > 127 ? 127 : v;
                q[c * k + i] = (int8_t)v;
                sum += (int32_t)v;
            }
            m->column_scales[c] = scale;
            m->column_sums[c] = sum;
        }
    } else {
        uint16_t *b = raw;
        for (size_t i = 0; i < n * k; i++) b[i] = bf16_round(weight[i]);
    }

    dnnl_dims_t src_dims = {DNNL_RUNTIME_DIM_VAL, (dnnl_dim_t)k}, weight_dims = {(dnnl_dim_t)k, (dnnl_dim_t)n};
    dnnl_dims_t dst_dims = {DNNL_RUNTIME_DIM_VAL, (dnnl_dim_t)n};
    dnnl_memory_desc_t src_md, any_md, plain_md, dst_md;
    TRY(dnnl_memory_desc_init_by_tag(&src_md, 2, src_dims, stype, dnnl_ab), "input description");
    TRY(dnnl_memory_desc_init_by_tag(&any_md, 2, weight_dims, wtype, dnnl_format_tag_any), "weight description");
    TRY(dnnl_memory_desc_init_by_tag(&plain_md, 2, weight_dims, wtype, dnnl_ba), "weight description");
    TRY(dnnl_memory_desc_init_by_tag(&dst_md, 2, dst_dims, dtype, dnnl_ab), "output description");
    dnnl_matmul_desc_t desc;
    TRY(dnnl_matmul_desc_init(&desc, &src_md, &any_md, NULL, &dst_md), "matrix product description");
    dnnl_primitive_attr_t attr;
    TRY(dnnl_primitive_attr_create(&attr), "attributes");
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_status_t made = dnnl_primitive_desc_create(&pd, &desc, attr, cpu, NULL);
    dnnl_primitive_attr_destroy(attr);
    TRY(made, "no oneDNN implementation of this product");
    TRY(dnnl_primitive_create(&m->primitive, pd), "product primitive");
    m->weights_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    m->scratchpad_bytes = dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));

    // Weights reordered once into the primitive's layout.
    TRY(dnnl_memory_create(&source, &plain_md, cpu, raw), "weight memory");
    TRY(dnnl_memory_create(&m->weights, &m->weights_md, cpu, DNNL_MEMORY_ALLOCATE), "weight memory");
    TRY(dnnl_reorder_primitive_desc_create(&reorder_pd, &plain_md, cpu, &m->weights_md, cpu, NULL), "weight reorder");
    TRY(dnnl_primitive_create(&reorder, reorder_pd), "weight reorder");
    TRY(dnnl_stream_create(&stream, cpu, dnnl_stream_default_flags), "stream");
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, m->weights}};
    TRY(dnnl_primitive_execute(reorder, stream, 2, args), "weight reorder");
    TRY(dnnl_stream_wait(stream), "weight reorder");
    dnnl_stream_destroy(stream);
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(reorder_pd);
    dnnl_memory_destroy(source);
    dnnl_primitive_desc_destroy(pd);
    free(raw);
    return m;

fail:
    if (stream) dnnl_stream_destroy(stream);
    if (reorder) dnnl_primitive_destroy(reorder);
    if (reorder_pd) dnnl_primitive_desc_destroy(reorder_pd);
    if (source) dnnl_memory_destroy(source);
    if (pd) dnnl_primitive_desc_destroy(pd);
    free(raw);
    kb_matmul_free(m);
    return NULL;
}

void kb_matmul_prime(kb_precision precision) {
    if (precision != KB_PRECISION_BF16 && precision != KB_PRECISION_INT8) return;
    enum { side = 32 };
    float weight[side * side], bias[side], x[side], out[side];
    for (size_t i = 0; i < side * side; i++) weight[i] = (float)(i % 7) / 7.0f;
    for (size_t i = 0; i < side; i++) bias[i] = x[i] = (float)i / side;
    const int outputs = precision == KB_PRECISION_BF16 ? 2 : 1;
    for (int bf16_output = 0; bf16_output < outputs; bf16_output++) {
        kb_matmul *m = kb_matmul_create(precision, weight, side, side, NULL, bf16_output ? KB_ACTIVATION_GELU : KB_ACTIVATION_NONE,
                                        bf16_output, NULL, 0);
        if (!m) return;
        void *scratch = malloc(kb_matmul_scratch_bytes(m, 1));
        if (scratch) kb_matmul_run(m, x, 0, 1, bias, out, scratch, 1, NULL, 0);
        free(scratch);
        kb_matmul_free(m);
    }
}

void kb_matmul_free(kb_matmul *m) {
    if (!m) return;
    if (m->primitive) dnnl_primitive_destroy(m->primitive);
    if (m->weights) dnnl_memory_destroy(m->weights);
    free(m->column_scales);
    free(m->column_sums);
    free(m->input_scales);
    free(m);
}


// Scratch layout: [oneDNN scratchpad][input rows as bf16 or u8][int8: row scales, row zero points,
// int32 products], each part 64-byte aligned.
static size_t align64(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

size_t kb_matmul_scratch_bytes(const kb_matmul *m, size_t rows) {
    size_t bytes = align64(m->scratchpad_bytes) + align64(rows * m->k * (m->precision == KB_PRECISION_INT8 ? 1 : 2));
    if (m->precision == KB_PRECISION_INT8) bytes += 2 * align64(rows * sizeof(float)) + align64(rows * m->n * sizeof(int32_t));
    return bytes + 64;
}

// ---- the element-wise steps around the product, per instruction set ----

static void to_bf16_generic(const float *x, size_t count, uint16_t *out) {
    for (size_t i = 0; i < count; i++) out[i] = bf16_round(x[i]);
}

#define ELEMENTWISE(SUFFIX, ATTRIBUTES)                                                                 \
    ATTRIBUTES static void quantize_rows_##SUFFIX(const float *x, size_t rows, size_t k, const float *u,  \
                                                  uint8_t *out, float *scales, float *zeros, float *row) {   \
        for (size_t r = 0; r < rows; r++) {                                                             \
            for (size_t i = 0; i < k; i++) row[i] = x[r * k + i] * u[i];                                \
            /* The range (with 0), 16 lanes at a time: the scalar loop's compares do not vectorize. */ \
            v16 lows = 0, highs = 0;                                                                    \
            size_t i = 0;                                                                               \
            for (; i + 16 <= k; i += 16) {                                                              \
                v16 v;                                                                                  \
                memcpy(&v, row + i, sizeof(v));                                                         \
                lows = __builtin_elementwise_min(lows, v);                                              \
                highs = __builtin_elementwise_max(highs, v);                                            \
            }                                                                                           \
            float lo = __builtin_reduce_min(lows), hi = __builtin_reduce_max(highs);                    \
            for (; i < k; i++) {                                                                        \
                lo = row[i] < lo ? row[i] : lo;                                                         \
                hi = row[i] > hi ? row[i] : hi;                                                         \
            }                                                                                           \
            float scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;                                          \
            float zero = nearbyintf(-lo / scale), inverse = 1.0f / scale;                               \
            uint8_t *q = out + r * k;                                                                   \
            for (size_t i = 0; i < k; i++) {                                                            \
                float v = nearbyintf(row[i] * inverse) + zero;                                          \
                q[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);                                        \
            }                                                                                           \
            scales[r] = scale;                                                                          \
            zeros[r] = zero;                                                                            \
        }                                                                                               \
    }                                                                                                   \
    ATTRIBUTES static void finish_##SUFFIX(float *out, const int32_t *products, const float *row_scales,  \
                                           const float *row_zeros, const float *column_scales,            \
                                           const int32_t *column_sums, const float *bias, size_t rows,    \
                                           size_t n, int gelu) {                                          \
        for (size_t r = 0; r < rows; r++) {                                                             \
            float *o = out + r * n;                                                                     \
            size_t c = 0;                                                                               \
            if (products) {                                                                             \
                const int32_t *p = products + r * n;                                                    \
                const float sx = row_scales[r], zx = row_zeros[r];                                      \
                for (size_t i = 0; i < n; i++)                                                          \
                    o[i] = sx * column_scales[i] * ((float)p[i] - zx * (float)column_sums[i]);          \
            }                                                                                           \
            for (; c + 16 <= n; c += 16) {                                                              \
                v16 v, b;                                                                               \
                memcpy(&v, o + c, sizeof(v));                                                           \
                memcpy(&b, bias + c, sizeof(b));                                                        \
                v += b;                                                                                 \
                if (gelu) gelu16(&v);                                                                   \
                memcpy(o + c, &v, sizeof(v));                                                           \
            }                                                                                           \
            if (c < n) {                                                                                \
                float lanes[16] = {0};                                                                  \
                for (size_t i = c; i < n; i++) lanes[i - c] = o[i] + bias[i];                           \
                v16 v;                                                                                  \
                memcpy(&v, lanes, sizeof(v));                                                           \
                if (gelu) gelu16(&v);                                                                   \
                memcpy(lanes, &v, sizeof(v));                                                           \
                for (size_t i = c; i < n; i++) o[i] = lanes[i - c];                                     \
            }                                                                                           \
        }                                                                                               \
    }

#if defined(__x86_64__) && defined(__clang__)
ELEMENTWISE(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma"))))

// bf16 inputs with the conversion instruction, 16 floats at a time: to nearest even as
// `bf16_round`, except that a subnormal becomes zero — which the product's vdpbf16ps makes of a
// subnormal input anyway, so the products are the same bit for bit.
__attribute__((target("avx512f,avx512vl,avx512bw,avx512bf16"))) static void to_bf16_bf16(const float *x, size_t count,
                                                                                         uint16_t *out) {
    size_t i = 0;
    for (; i + 16 <= count; i += 16)
        _mm256_storeu_si256((__m256i *)(out + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i)));
    for (; i < count; i++) out[i] = bf16_round(x[i]);
}

// After a bf16 product: the bias and GELU, over each row of
// fp32 sums in place, then (`to_bf16`) each value rounded to bf16 and written as such from the
// start of the same memory. Values are taken in order, 16 at a time: the bf16s of the values read
// so far only ever cover bytes already read.
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,fma"))) static void finish_bf16(float *x, size_t rows, size_t n,
                                                                                                   const float *bias, int gelu,
                                                                                                   int to_bf16) {
    uint16_t *half = (uint16_t *)x;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < n; c += 16) {
            // The last few of a row with the same arithmetic, so that no value's result depends on
            // where it falls; masked loads and stores only there (a masked store is several times
            // slower than a plain one on AMD's cores: masking every store cost 12% of a pass).
            const int whole = n - c >= 16;
            const __mmask16 lanes = whole ? (__mmask16)0xffff : (__mmask16)((1u << (n - c)) - 1);
            const size_t i = r * n + c;
            __m512 w = whole ? _mm512_loadu_ps(x + i) : _mm512_maskz_loadu_ps(lanes, x + i);
            w = _mm512_add_ps(w, whole ? _mm512_loadu_ps(bias + c) : _mm512_maskz_loadu_ps(lanes, bias + c));
            if (gelu) {
                v16 v;
                memcpy(&v, &w, sizeof(v));
                gelu16(&v);
                memcpy(&w, &v, sizeof(w));
            }
            if (to_bf16) {
                __m256i b = (__m256i)_mm512_cvtneps_pbh(w);
                if (whole) _mm256_storeu_si256((__m256i *)(half + i), b);
                else _mm256_mask_storeu_epi16(half + i, lanes, b);
            } else if (whole) {
                _mm512_storeu_ps(x + i, w);
            } else {
                _mm512_mask_storeu_ps(x + i, lanes, w);
            }
        }
    }
}
#endif
ELEMENTWISE(generic, )

static void finish_bf16_generic(float *x, size_t rows, size_t n, const float *bias, int gelu, int to_bf16) {
    uint16_t *half = (uint16_t *)x;
    for (size_t i = 0; i < rows * n; i++) {
        float lanes[16] = {x[i] + bias[i % n]};
        v16 v;
        memcpy(&v, lanes, sizeof(v));
        if (gelu) gelu16(&v);
        memcpy(lanes, &v, sizeof(v));
        if (to_bf16) half[i] = bf16_round(lanes[0]);
        else x[i] = lanes[0];
    }
}

int kb_matmul_run(const kb_matmul *m, const void *x, int input_bf16, size_t rows, const float *bias, void *out,
                  void *scratch, int threads, char *error, size_t error_size) {
    if (rows == 0) return 1;
    dnnl_stream_t stream = stream_for_thread();
    if (!stream) {
        if (error && error_size) snprintf(error, error_size, "oneDNN could not create a stream");
        return 0;
    }
    const int int8 = m->precision == KB_PRECISION_INT8;
    const int wide = m->wide;
    uint8_t *base = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    void *pad = base;
    uint8_t *input = base + align64(m->scratchpad_bytes);
    if (!int8 && input_bf16) input = (uint8_t *)x;
    float *row_scales = NULL, *row_zeros = NULL;
    int32_t *products = NULL;
    if (int8) {
        row_scales = (float *)(input + align64(rows * m->k));
        row_zeros = (float *)((uint8_t *)row_scales + align64(rows * sizeof(float)));
        products = (int32_t *)((uint8_t *)row_zeros + align64(rows * sizeof(float)));
#if defined(__x86_64__) && defined(__clang__)
        float row[m->k];   // one input row after its column scales
        if (wide) quantize_rows_avx512((const float *)x, rows, m->k, m->input_scales, input, row_scales, row_zeros, row);
        else
#endif
            quantize_rows_generic((const float *)x, rows, m->k, m->input_scales, input, row_scales, row_zeros, row);
    } else if (!input_bf16) {
#if defined(__x86_64__) && defined(__clang__)
        if (m->convert) to_bf16_bf16((const float *)x, rows * m->k, (uint16_t *)input);
        else
#endif
            to_bf16_generic((const float *)x, rows * m->k, (uint16_t *)input);
    }

    dnnl_engine_t cpu = cpu_engine();
    dnnl_dims_t src_dims = {(dnnl_dim_t)rows, (dnnl_dim_t)m->k}, dst_dims = {(dnnl_dim_t)rows, (dnnl_dim_t)m->n};
    dnnl_dims_t pad_dims = {(dnnl_dim_t)(m->scratchpad_bytes ? m->scratchpad_bytes : 1)};
    dnnl_memory_desc_t src_md, dst_md, pad_md;
    dnnl_memory_t src = NULL, dst = NULL, scratchpad = NULL;
    int ok = 0;
    TRY(dnnl_memory_desc_init_by_tag(&src_md, 2, src_dims, int8 ? dnnl_u8 : dnnl_bf16, dnnl_ab), "input description");
    TRY(dnnl_memory_desc_init_by_tag(&dst_md, 2, dst_dims, int8 ? dnnl_s32 : dnnl_f32, dnnl_ab), "output description");
    TRY(dnnl_memory_desc_init_by_tag(&pad_md, 1, pad_dims, dnnl_u8, dnnl_a), "scratchpad description");
    TRY(dnnl_memory_create(&src, &src_md, cpu, input), "input memory");
    TRY(dnnl_memory_create(&dst, &dst_md, cpu, int8 ? (void *)products : out), "output memory");
    if (m->scratchpad_bytes) TRY(dnnl_memory_create(&scratchpad, &pad_md, cpu, pad), "scratchpad memory");
    set_threads(threads);
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, m->weights}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
    TRY(dnnl_primitive_execute(m->primitive, stream, m->scratchpad_bytes ? 4 : 3, args), "matrix product");
    TRY(dnnl_stream_wait(stream), "matrix product");

    const int gelu = m->activation == KB_ACTIVATION_GELU;
    // Without a bias (the consumer adds it), activation or bf16 result, the sums stay as they are.
    if (!int8 && (bias || gelu || m->bf16_output)) {
#if defined(__x86_64__) && defined(__clang__)
        if (m->convert) finish_bf16((float *)out, rows, m->n, bias, gelu, m->bf16_output);
        else
#endif
            finish_bf16_generic((float *)out, rows, m->n, bias, gelu, m->bf16_output);
    }
    if (int8) {
#if defined(__x86_64__) && defined(__clang__)
        if (wide) finish_avx512((float *)out, products, row_scales, row_zeros, m->column_scales, m->column_sums, bias, rows, m->n, gelu);
        else
#endif
            finish_generic((float *)out, products, row_scales, row_zeros, m->column_scales, m->column_sums, bias, rows, m->n, gelu);
    }
    ok = 1;
fail:
    if (src) dnnl_memory_destroy(src);
    if (dst) dnnl_memory_destroy(dst);
    if (scratchpad) dnnl_memory_destroy(scratchpad);
    return ok;
}
