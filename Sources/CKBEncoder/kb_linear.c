#include "kb_encoder.h"
#include <math.h>
#include <string.h>

#include "kb_vector_math.h"

// One tile: MR rows of x times one packed panel (NV·16 columns). Each output element is
//     acc = 0;  acc = fma(x[r][k], w[k][c], acc) for k = 0 ..< K;  out = acc + bias[c]
// so tile size, batch, thread and instruction set never change a result's bits.
#define TILE(NAME, MR, NV)                                                                              \
    static inline __attribute__((always_inline)) void NAME(const float *x, size_t k, const float *panel, \
                                                           const float *bias, float *out, size_t ldo,    \
                                                           size_t cols, int gelu) {                      \
        v16 acc[MR][NV];                                                                                \
        for (int r = 0; r < MR; r++)                                                                    \
            for (int v = 0; v < NV; v++) acc[r][v] = (v16)0.0f;                                         \
        const float *w = panel;                                                                         \
        for (size_t kk = 0; kk < k; kk++, w += 16 * NV) {                                               \
            v16 wv[NV];                                                                                 \
            for (int v = 0; v < NV; v++) memcpy(&wv[v], w + 16 * v, sizeof(v16));                       \
            for (int r = 0; r < MR; r++) {                                                              \
                v16 xb = (v16)x[r * k + kk];                                                            \
                for (int v = 0; v < NV; v++) acc[r][v] = __builtin_elementwise_fma(xb, wv[v], acc[r][v]); \
            }                                                                                           \
        }                                                                                               \
        for (int r = 0; r < MR; r++) {                                                                  \
            float *o = out + r * ldo;                                                                   \
            if (cols == 16 * NV) {                                                                      \
                for (int v = 0; v < NV; v++) {                                                          \
                    v16 b, s;                                                                           \
                    memcpy(&b, bias + 16 * v, sizeof(v16));                                             \
                    s = acc[r][v] + b;                                                                  \
                    if (gelu) gelu16(&s);                                                            \
                    memcpy(o + 16 * v, &s, sizeof(v16));                                                \
                }                                                                                       \
            } else {                                                                                    \
                float lanes[16 * NV], padded[16 * NV];                                                  \
                memcpy(lanes, acc[r], sizeof(lanes));                                                   \
                for (size_t c = 0; c < 16 * NV; c++) padded[c] = c < cols ? bias[c] : 0;               \
                for (int v = 0; v < NV; v++) {                                                          \
                    v16 b, s;                                                                           \
                    memcpy(&b, padded + 16 * v, sizeof(v16));                                           \
                    memcpy(&s, lanes + 16 * v, sizeof(v16));                                            \
                    s = s + b;                                                                          \
                    if (gelu) gelu16(&s);                                                            \
                    memcpy(lanes + 16 * v, &s, sizeof(v16));                                            \
                }                                                                                       \
                for (size_t c = 0; c < cols; c++) o[c] = lanes[c];                                      \
            }                                                                                           \
        }                                                                                               \
    }

// Rows go in blocks whose slice of x stays in cache while every panel of the range passes over
// it; inside a block, tiles of MR rows, then 4, 2 and 1 for the rest.
#define KERNEL(SUFFIX, ATTRIBUTES, MR, NV)                                                              \
    TILE(tile_##SUFFIX##_full, MR, NV)                                                                  \
    TILE(tile_##SUFFIX##_4, 4, NV)                                                                      \
    TILE(tile_##SUFFIX##_2, 2, NV)                                                                      \
    TILE(tile_##SUFFIX##_1, 1, NV)                                                                      \
    ATTRIBUTES static void linear_##SUFFIX(const float *x, size_t m, size_t k, const float *packed,     \
                                           const float *bias, size_t n, float *out, size_t p0, size_t p1,   \
                                           int gelu) {                                                  \
        const size_t width = 16 * NV;                                                                   \
        size_t block = (16384 / k) / MR * MR;                                                           \
        if (block < MR) block = MR;                                                                     \
        for (size_t m0 = 0; m0 < m; m0 += block) {                                                      \
            size_t m1 = m0 + block < m ? m0 + block : m;                                                \
            for (size_t p = p0; p < p1; p++) {                                                          \
                const float *panel = packed + p * k * width;                                            \
                size_t c0 = p * width, cols = n - c0 < width ? n - c0 : width;                          \
                size_t r = m0;                                                                          \
                for (; r + MR <= m1; r += MR)                                                           \
                    tile_##SUFFIX##_full(x + r * k, k, panel, bias + c0, out + r * n + c0, n, cols, gelu);    \
                if (MR > 4)                                                                             \
                    for (; r + 4 <= m1; r += 4)                                                         \
                        tile_##SUFFIX##_4(x + r * k, k, panel, bias + c0, out + r * n + c0, n, cols, gelu);   \
                for (; r + 2 <= m1; r += 2)                                                             \
                    tile_##SUFFIX##_2(x + r * k, k, panel, bias + c0, out + r * n + c0, n, cols, gelu);       \
                for (; r < m1; r++) tile_##SUFFIX##_1(x + r * k, k, panel, bias + c0, out + r * n + c0, n, cols, gelu); \
            }                                                                                           \
        }                                                                                               \
    }

#if defined(__x86_64__) && defined(__clang__)
KERNEL(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma"))), 8, 2)
KERNEL(avx2, __attribute__((target("avx2,fma"))), 6, 1)
#endif
KERNEL(generic, , 4, 1)

size_t kb_linear_panel_width(kb_variant variant) { return variant == KB_VARIANT_AVX512 ? 32 : 16; }

size_t kb_linear_panels(kb_variant variant, size_t n) {
    size_t width = kb_linear_panel_width(variant);
    return (n + width - 1) / width;
}

size_t kb_linear_packed_count(kb_variant variant, size_t n, size_t k) {
    return kb_linear_panels(variant, n) * kb_linear_panel_width(variant) * k;
}

void kb_linear_pack(kb_variant variant, const float *weight, size_t n, size_t k, float *packed) {
    size_t width = kb_linear_panel_width(variant), panels = kb_linear_panels(variant, n);
    for (size_t p = 0; p < panels; p++)
        for (size_t kk = 0; kk < k; kk++)
            for (size_t c = 0; c < width; c++) {
                size_t row = p * width + c;
                packed[(p * k + kk) * width + c] = row < n ? weight[row * k + kk] : 0.0f;
            }
}

void kb_linear(kb_variant variant, const float *x, size_t m, size_t k, const float *packed, const float *bias,
               size_t n, float *out, size_t panel_begin, size_t panel_end, kb_activation activation) {
    int gelu = activation == KB_ACTIVATION_GELU;
    switch (variant) {
#if defined(__x86_64__) && defined(__clang__)
    case KB_VARIANT_AVX512: linear_avx512(x, m, k, packed, bias, n, out, panel_begin, panel_end, gelu); return;
    case KB_VARIANT_AVX2: linear_avx2(x, m, k, packed, bias, n, out, panel_begin, panel_end, gelu); return;
#endif
    default: linear_generic(x, m, k, packed, bias, n, out, panel_begin, panel_end, gelu); return;
    }
}

// The lanes' sum, in lane order. (A pointer, not a vector argument: the vector ABI differs
// between the AVX2 and AVX-512 functions that inline it.)
static inline __attribute__((always_inline)) float sum16(const v16 *v) {
    float lanes[16], sum = 0;
    memcpy(lanes, v, sizeof(lanes));
    for (int l = 0; l < 16; l++) sum += lanes[l];
    return sum;
}

// x = LayerNorm(x + residual) for one row: mean and variance in 16 lanes, summed in a fixed order.
// COPY(a, at) stores the row's normalised 16 values `a` at element `at` of a copy (or does nothing).
#define NORM(SUFFIX, ATTRIBUTES, COPY)                                                                  \
    ATTRIBUTES static void add_layer_norm_##SUFFIX(float *x, const float *residual, const float *residual_bias, \
                                                   size_t rows, size_t width, const float *weight,       \
                                                   const float *bias, float eps, uint16_t *copy) {       \
        (void)copy;                                                                                     \
        const size_t vectors = width / 16;                                                              \
        for (size_t r = 0; r < rows; r++) {                                                             \
            float *row = x + r * width;                                                                 \
            const float *add = residual ? residual + r * width : 0;                                     \
            v16 sums = (v16)0.0f;                                                                       \
            for (size_t v = 0; v < vectors; v++) {                                                      \
                v16 a;                                                                                  \
                memcpy(&a, row + 16 * v, sizeof(a));                                                    \
                if (add) {                                                                              \
                    v16 b;                                                                              \
                    memcpy(&b, add + 16 * v, sizeof(b));                                                \
                    if (residual_bias) {                                                                \
                        v16 c;                                                                          \
                        memcpy(&c, residual_bias + 16 * v, sizeof(c));                                  \
                        b += c;                                                                         \
                    }                                                                                   \
                    a += b;                                                                             \
                    memcpy(row + 16 * v, &a, sizeof(a));                                                \
                }                                                                                       \
                sums += a;                                                                              \
            }                                                                                           \
            float mean = sum16(&sums) / (float)width;                                     \
            v16 squares = (v16)0.0f;                                                                    \
            for (size_t v = 0; v < vectors; v++) {                                                      \
                v16 a;                                                                                  \
                memcpy(&a, row + 16 * v, sizeof(a));                                                    \
                a -= mean;                                                                              \
                squares += a * a;                                                                       \
            }                                                                                           \
            float inverse = 1.0f / sqrtf(sum16(&squares) / (float)width + eps);           \
            for (size_t v = 0; v < vectors; v++) {                                                      \
                v16 a, w, b;                                                                            \
                memcpy(&a, row + 16 * v, sizeof(a));                                                    \
                memcpy(&w, weight + 16 * v, sizeof(w));                                                 \
                memcpy(&b, bias + 16 * v, sizeof(b));                                                   \
                a = (a - mean) * inverse * w + b;                                                       \
                memcpy(row + 16 * v, &a, sizeof(a));                                                    \
                COPY(a, r * width + 16 * v);                                                            \
            }                                                                                           \
        }                                                                                               \
    }

#define NO_COPY(a, at)
#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>
// The bf16 copy as kb_matmul_run rounds its fp32 inputs: vcvtneps2bf16, to nearest even.
#define BF16_COPY(a, at)                                                                                \
    do {                                                                                                \
        __m512 lanes;                                                                                   \
        memcpy(&lanes, &(a), sizeof(lanes));                                                            \
        _mm256_storeu_si256((__m256i *)(copy + (at)), (__m256i)_mm512_cvtneps_pbh(lanes));              \
    } while (0)
NORM(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma"))), NO_COPY)
NORM(avx512_bf16, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,fma"))), BF16_COPY)
NORM(avx2, __attribute__((target("avx2,fma"))), NO_COPY)
#endif
NORM(generic, , NO_COPY)

void kb_add_layer_norm_bf16(float *x, const float *residual, const float *residual_bias, size_t rows, size_t width,
                            const float *weight, const float *bias, float eps, uint16_t *copy) {
#if defined(__x86_64__) && defined(__clang__)
    add_layer_norm_avx512_bf16(x, residual, residual_bias, rows, width, weight, bias, eps, copy);
#else
    (void)x; (void)residual; (void)residual_bias; (void)rows; (void)width; (void)weight; (void)bias; (void)eps; (void)copy;
#endif
}

void kb_add_layer_norm(kb_variant variant, float *x, const float *residual, const float *residual_bias, size_t rows,
                       size_t width, const float *weight, const float *bias, float eps) {
    switch (variant) {
#if defined(__x86_64__) && defined(__clang__)
    case KB_VARIANT_AVX512: add_layer_norm_avx512(x, residual, residual_bias, rows, width, weight, bias, eps, NULL); return;
    case KB_VARIANT_AVX2: add_layer_norm_avx2(x, residual, residual_bias, rows, width, weight, bias, eps, NULL); return;
#endif
    default: add_layer_norm_generic(x, residual, residual_bias, rows, width, weight, bias, eps, NULL); return;
    }
}
