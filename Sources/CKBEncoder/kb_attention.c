#include "kb_encoder.h"
#include <math.h>
#include <string.h>

typedef float v16 __attribute__((ext_vector_type(16)));

// The 16-wide helpers below take and return vectors by value without a target of their own: they
// are always inlined into the per-target kernels, so no call with a target-dependent vector ABI
// is ever made (clang's -Wpsabi warns about the declarations alone).
#pragma clang diagnostic ignored "-Wpsabi"

static inline __attribute__((always_inline)) v16 load16(const float *p) {
    v16 v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline __attribute__((always_inline)) void store16(float *p, v16 v) { memcpy(p, &v, sizeof(v)); }

typedef int32_t i16 __attribute__((ext_vector_type(16)));

// e^x on 16 lanes for x ≤ 0 (softmax's shifted scores), Cephes-style: range reduction by ln 2 and
// a degree-6 polynomial; relative error about 1 ulp. Casts between vector types reinterpret the bits.
static inline __attribute__((always_inline)) v16 exp16(v16 x) {
    x = __builtin_elementwise_max(x, (v16)-87.33654f);
    v16 t = x * 1.44269504088896341f + 12582912.0f;
    v16 n = t - 12582912.0f;
    v16 r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    v16 p = (v16)1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    v16 y = p * r * r + r + 1.0f;
    i16 bits = (((i16)t - 0x4B400000) + 127) << 23;
    return y * (v16)bits;
}

// A row of scores (n real, padded to a multiple of 16) turned into unnormalised softmax weights
// e^(score − max), padding 0; returns 1 / their sum. Takes pointers, not vectors, so that kernels
// of any target inline it.
static inline __attribute__((always_inline)) float softmax_weights(float *row, size_t n, size_t padded) {
    const size_t blocks = padded / 16;
    for (size_t j = n; j < padded; j++) row[j] = -INFINITY;
    v16 top = load16(row);
    for (size_t b = 1; b < blocks; b++) top = __builtin_elementwise_max(top, load16(row + 16 * b));
    float maximum = __builtin_reduce_max(top);
    v16 sums = (v16)0.0f;
    for (size_t b = 0; b < blocks; b++) {
        v16 e = exp16(load16(row + 16 * b) - maximum);
        store16(row + 16 * b, e);
        sums += e;
    }
    for (size_t j = n; j < padded; j++) row[j] = 0;
    float lanes[16], sum = 0;
    memcpy(lanes, &sums, sizeof(lanes));
    for (int l = 0; l < 16; l++) sum += lanes[l];
    return 1.0f / sum;
}

// One (sequence, head) pair. The keys are transposed into scratch so that a query row's scores
// against 16 keys at a time are plain multiply-adds (no horizontal sums); the weighted sum of
// values runs along the head's width.
static inline __attribute__((always_inline)) void attend(const float *qkv, size_t base, size_t n, size_t hidden,
                                                         size_t head, size_t d, float scale, float *out, float *scratch) {
    const size_t stride = 3 * hidden;
    const size_t padded = (n + 15) & ~(size_t)15;
    float *keys = scratch;                 // [d × padded]
    float *scores = scratch + d * padded;  // [padded]
    float *context = scores + padded;      // [d]
    const float *q0 = qkv + base * stride + head * d;
    const float *k0 = q0 + hidden;
    const float *v0 = q0 + 2 * hidden;
    for (size_t t = 0; t < d; t++) {
        float *row = keys + t * padded;
        for (size_t j = 0; j < n; j++) row[j] = k0[j * stride + t];
        for (size_t j = n; j < padded; j++) row[j] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        const float *q = q0 + i * stride;
        for (size_t j = 0; j < padded; j++) scores[j] = 0;
        for (size_t t = 0; t < d; t++) {
            const float qt = q[t] * scale;
            const float *row = keys + t * padded;
            for (size_t j = 0; j < padded; j++) scores[j] += qt * row[j];
        }
        // Max and sum in 16 lanes over the padded row (padding is -inf, then 0), so that every
        // loop vectorises without reordering floating-point sums.
        for (size_t j = n; j < padded; j++) scores[j] = -INFINITY;
        float lanes[16];
        for (size_t l = 0; l < 16; l++) lanes[l] = scores[l];
        for (size_t j = 16; j < padded; j += 16)
            for (size_t l = 0; l < 16; l++) lanes[l] = scores[j + l] > lanes[l] ? scores[j + l] : lanes[l];
        float maximum = lanes[0];
        for (size_t l = 1; l < 16; l++) maximum = lanes[l] > maximum ? lanes[l] : maximum;
        for (size_t j = 0; j < padded; j += 16) store16(scores + j, exp16(load16(scores + j) - maximum));
        for (size_t j = n; j < padded; j++) scores[j] = 0;
        for (size_t l = 0; l < 16; l++) lanes[l] = 0;
        for (size_t j = 0; j < padded; j += 16)
            for (size_t l = 0; l < 16; l++) lanes[l] += scores[j + l];
        float sum = 0;
        for (size_t l = 0; l < 16; l++) sum += lanes[l];
        const float inverse = 1.0f / sum;
        for (size_t j = 0; j < n; j++) scores[j] *= inverse;
        for (size_t t = 0; t < d; t++) context[t] = 0;
        for (size_t j = 0; j < n; j++) {
            const float p = scores[j];
            const float *v = v0 + j * stride;
            for (size_t t = 0; t < d; t++) context[t] += p * v[t];
        }
        memcpy(out + (base + i) * hidden + head * d, context, d * sizeof(float));
    }
}

// The same computation as `attend` with 16-wide vectors kept in registers: R query rows at a
// time share each key and value load; a head is D·16 wide.
#define ATTEND_FAST(NAME, R, D)                                                                         \
    static inline __attribute__((always_inline)) void NAME(const float *qkv, size_t base, size_t n,      \
                                                           size_t hidden, size_t head, float scale,      \
                                                           float *out, float *scratch) {                 \
        const size_t d = 16 * D, stride = 3 * hidden;                                                   \
        const size_t padded = (n + 15) & ~(size_t)15, blocks = padded / 16;                             \
        float *keys = scratch;                /* [d × padded] */                                        \
        float *scores = scratch + d * padded; /* [R × padded] */                                        \
        const float *q0 = qkv + base * stride + head * d;                                               \
        const float *k0 = q0 + hidden;                                                                  \
        const float *v0 = q0 + 2 * hidden;                                                              \
        for (size_t t = 0; t < d; t++) {                                                                \
            float *row = keys + t * padded;                                                             \
            for (size_t j = 0; j < n; j++) row[j] = k0[j * stride + t];                                 \
            for (size_t j = n; j < padded; j++) row[j] = 0;                                             \
        }                                                                                               \
        for (size_t i0 = 0; i0 < n; i0 += R) {                                                          \
            const size_t rows = n - i0 < R ? n - i0 : R;                                                \
            float q[R][16 * D]; /* the block's query rows, scaled once */                                 \
            for (int r = 0; r < R; r++) {                                                               \
                const float *row = q0 + (i0 + ((size_t)r < rows ? (size_t)r : 0)) * stride;             \
                for (size_t t = 0; t < d; t++) q[r][t] = row[t] * scale;                                \
            }                                                                                           \
            for (size_t b = 0; b < blocks; b++) {                                                       \
                v16 acc[R];                                                                             \
                for (int r = 0; r < R; r++) acc[r] = (v16)0.0f;                                         \
                const float *kt = keys + b * 16;                                                        \
                for (size_t t = 0; t < d; t++, kt += padded) {                                          \
                    v16 k = load16(kt);                                                                 \
                    for (int r = 0; r < R; r++) acc[r] = __builtin_elementwise_fma((v16)q[r][t], k, acc[r]); \
                }                                                                                       \
                for (int r = 0; r < R; r++) store16(scores + r * padded + b * 16, acc[r]);              \
            }                                                                                           \
            float inverse[R];   /* 1 / each row's sum of weights, applied to its context */             \
            for (size_t r = 0; r < rows; r++) inverse[r] = softmax_weights(scores + r * padded, n, padded); \
            v16 context[R][D];                                                                          \
            for (int r = 0; r < R; r++)                                                                 \
                for (int c = 0; c < D; c++) context[r][c] = (v16)0.0f;                                  \
            for (size_t j = 0; j < n; j++) {                                                            \
                const float *v = v0 + j * stride;                                                       \
                v16 values[D];                                                                          \
                for (int c = 0; c < D; c++) values[c] = load16(v + 16 * c);                             \
                for (int r = 0; r < R; r++) {                                                           \
                    v16 p = (v16)scores[r * padded + j];                                                \
                    for (int c = 0; c < D; c++) context[r][c] = __builtin_elementwise_fma(p, values[c], context[r][c]); \
                }                                                                                       \
            }                                                                                           \
            for (size_t r = 0; r < rows; r++)                                                           \
                for (int c = 0; c < D; c++)                                                             \
                    store16(out + (base + i0 + r) * hidden + head * d + 16 * c, context[r][c] * inverse[r]); \
        }                                                                                               \
    }

#define ATTENTION(SUFFIX, ATTRIBUTES, R)                                                                \
    ATTEND_FAST(attend_##SUFFIX##_32, R, 2)                                                             \
    ATTEND_FAST(attend_##SUFFIX##_64, R, 4)                                                             \
    ATTRIBUTES static void attention_##SUFFIX(const float *qkv, const int32_t *offsets, size_t hidden,   \
                                              size_t heads, float scale, float *out, float *scratch,     \
                                              size_t begin, size_t end) {                                \
        const size_t d = hidden / heads;                                                                \
        for (size_t item = begin; item < end; item++) {                                                 \
            size_t s = item / heads, head = item % heads;                                               \
            size_t base = (size_t)offsets[s], n = (size_t)(offsets[s + 1] - offsets[s]);                \
            if (n == 0) continue;                                                                       \
            if (d == 32) attend_##SUFFIX##_32(qkv, base, n, hidden, head, scale, out, scratch);         \
            else if (d == 64) attend_##SUFFIX##_64(qkv, base, n, hidden, head, scale, out, scratch);    \
            else attend(qkv, base, n, hidden, head, d, scale, out, scratch);                            \
        }                                                                                               \
    }

#if defined(__x86_64__) && defined(__clang__)
ATTENTION(avx512, __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma"))), 8)
ATTENTION(avx2, __attribute__((target("avx2,fma"))), 2)
#endif
ATTENTION(generic, , 2)

size_t kb_attention_scratch_count(size_t longest, size_t head_size) {
    size_t padded = (longest + 15) & ~(size_t)15;
    return head_size * padded + 8 * padded + head_size;   // keys, up to eight rows of scores, one context row
}

void kb_attention(kb_variant variant, const float *qkv, const int32_t *offsets, size_t hidden, size_t heads, float scale,
                  float *out, float *scratch, size_t item_begin, size_t item_end) {
    switch (variant) {
#if defined(__x86_64__) && defined(__clang__)
    case KB_VARIANT_AVX512: attention_avx512(qkv, offsets, hidden, heads, scale, out, scratch, item_begin, item_end); return;
    case KB_VARIANT_AVX2: attention_avx2(qkv, offsets, hidden, heads, scale, out, scratch, item_begin, item_end); return;
#endif
    default: attention_generic(qkv, offsets, hidden, heads, scale, out, scratch, item_begin, item_end); return;
    }
}
