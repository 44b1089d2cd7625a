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
    // fp32: keys, up to eight rows of scores, one context row. bf16: keys and values (half a
    // float each), eight rows of scores and their bf16 weights (half a float each).
    return head_size * padded + 12 * padded + head_size;
}

// ---- bf16 attention (AVX-512 BF16) ----
//
// The same computation with the two products, queries·keys and weights·values, on bf16 pairs
// with fp32 sums (vdpbf16ps: 32 multiply-adds per instruction, twice fp32's). Softmax stays fp32.
// Used by the reduced-precision encoder only (`--precision bf16|int8`), whose linear layers
// already round their inputs to bf16 or int8.

#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>

#define BF16_TARGET __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,fma")))

// fp32 → bf16 by vcvtne(2)ps2bf16: rounding to nearest even, subnormals to zero (which vdpbf16ps
// makes of its subnormal inputs anyway, so the products are those of a rounding that keeps them).

// A 16 × 16 matrix of 32-bit elements, one row a register, transposed in place (r[c] becomes
// column c): pairs of rows interleaved by 32, then 64 bits, then 128-bit lanes gathered twice.
BF16_TARGET static inline void transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            t[8 * i + k] = _mm512_shuffle_i32x4(r[8 * i + k], r[8 * i + 4 + k], 0x88);
            t[8 * i + 4 + k] = _mm512_shuffle_i32x4(r[8 * i + k], r[8 * i + 4 + k], 0xdd);
        }
    for (int k = 0; k < 8; k++) {
        r[k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_i32x4(t[k], t[8 + k], 0xdd);
    }
}

// A row of scores (n real, padded to a multiple of 16) whose largest real score is `maximum`, as
// unnormalised softmax weights e^(score − max) in bf16 (padding 0), written to `weights` in one
// pass; returns the fp32 weights' sums, 16 lanes (each row's horizontal sums and maxima are taken
// for all the block's rows together: one row's chain of shuffles after another's was 16% of the
// kernel's time). e^x is 2^(x·log₂e): the exponent's
// integer part applied by vscalefps, its fraction by a degree-3 polynomial for 2^f on [−½, ½]
// fitted for relative error (at most 7.5e-5, fifty times below the 4e-3 of the bf16 the weights
// are rounded to; Cephes' degree 6, 1e-7, cost three more multiply-adds a value for nothing the
// weights keep). The shift by the maximum is one rounding common to every weight of the row,
// which the normalisation cancels.
BF16_TARGET static inline __m512 softmax_bf16(const float *row, uint32_t *weights, size_t n, size_t padded, float maximum) {
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f), shift = _mm512_set1_ps(-maximum * 1.44269504088896341f);
    __m512 sums = _mm512_setzero_ps();
    for (size_t j = 0; j < padded; j += 16) {
        __m512 t = _mm512_fmadd_ps(_mm512_loadu_ps(row + j), log2e, shift);
        __m512 whole = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512 f = _mm512_sub_ps(t, whole);
        __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0.05517166875457539f), f, _mm512_set1_ps(0.24261114787053029f));
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.6932609877583416f));
        p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.9999280720307984f));
        __m512 e = _mm512_scalef_ps(p, whole);
        if (j + 16 > n) e = _mm512_maskz_mov_ps((__mmask16)(0xffffu >> (j + 16 - n)), e);
        sums = _mm512_add_ps(sums, e);
        _mm256_storeu_si256((__m256i *)(weights + j / 2), (__m256i)_mm512_cvtneps_pbh(e));
    }
    return sums;
}

// One (sequence, head) pair, R query rows at a time, a head D·16 wide. Keys are laid out as
// [d/2][padded] pairs (a key's dimensions 2p, 2p+1 side by side), so that 16 keys' scores
// against a query are d/2 instructions; values as [padded/2][d] pairs (tokens 2q, 2q+1 side by
// side), so that a row's context gathers two tokens per instruction.
#define ATTEND_BF16(NAME, R, D)                                                                         \
    BF16_TARGET static void NAME(const float *qkv, const float *bias, size_t base, size_t n, size_t hidden, \
                                 size_t head, float scale, float *out, uint16_t *half, float *scratch) { \
        const size_t d = 16 * D, stride = 3 * hidden;                                                   \
        /* The projections' bias for this head (query, key, value), added as each is read. */          \
        __m512 qb[D], kb[D], vb[D];                                                                     \
        for (int c = 0; c < D; c++) {                                                                   \
            qb[c] = bias ? _mm512_loadu_ps(bias + head * d + 16 * c) : _mm512_setzero_ps();             \
            kb[c] = bias ? _mm512_loadu_ps(bias + hidden + head * d + 16 * c) : _mm512_setzero_ps();    \
            vb[c] = bias ? _mm512_loadu_ps(bias + 2 * hidden + head * d + 16 * c) : _mm512_setzero_ps(); \
        }                                                                                               \
        const size_t padded = (n + 15) & ~(size_t)15, blocks = padded / 16;                             \
        uint32_t *keys = (uint32_t *)scratch;               /* [d/2 × padded] pairs */                  \
        uint32_t *values = keys + d / 2 * padded;           /* [padded/2 × d] pairs */                  \
        float *scores = (float *)(values + padded / 2 * d); /* [R × padded] */                          \
        uint32_t *weights = (uint32_t *)(scores + R * padded); /* [R × padded/2] pairs */               \
        const float *q0 = qkv + base * stride + head * d;                                               \
        const float *k0 = q0 + hidden;                                                                  \
        const float *v0 = q0 + 2 * hidden;                                                              \
        for (size_t j0 = 0; j0 < padded; j0 += 16)                                                      \
            for (int c = 0; c < D; c += 2) {                                                            \
                /* 16 keys' pairs 8c … 8c+15 (a key's d floats in order are its d/2 pairs), one key a   \
                   row, transposed: row p is then pair 8c+p of the 16 keys, in place at column j0. */    \
                __m512i rows[16];                                                                       \
                for (size_t i = 0; i < 16; i++) {                                                       \
                    const float *k = k0 + (j0 + i) * stride + 16 * c;                                   \
                    rows[i] = j0 + i >= n ? _mm512_setzero_si512()                                      \
                              : bias ? (__m512i)_mm512_cvtne2ps_pbh(_mm512_add_ps(_mm512_loadu_ps(k + 16), kb[c + 1]), \
                                                                    _mm512_add_ps(_mm512_loadu_ps(k), kb[c])) \
                                     : (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(k + 16), _mm512_loadu_ps(k)); \
                }                                                                                       \
                transpose16(rows);                                                                      \
                for (size_t p = 0; p < 16; p++) _mm512_storeu_si512(keys + (8 * c + p) * padded + j0, rows[p]); \
            }                                                                                           \
        for (size_t j = 0; j < padded; j += 2) {                                                        \
            /* Tokens j and j+1 side by side: bf16 of each, interleaved lane by lane. */                \
            uint32_t *row = values + j / 2 * d;                                                         \
            for (int c = 0; c < D; c++) {                                                               \
                __m512 first = j < n ? _mm512_loadu_ps(v0 + j * stride + 16 * c) : _mm512_setzero_ps(); \
                __m512 second = j + 1 < n ? _mm512_loadu_ps(v0 + (j + 1) * stride + 16 * c) : _mm512_setzero_ps(); \
                if (bias && j < n) first = _mm512_add_ps(first, vb[c]);                                 \
                if (bias && j + 1 < n) second = _mm512_add_ps(second, vb[c]);                           \
                __m512i a = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(first));                  \
                __m512i b = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(second));                 \
                _mm512_storeu_si512(row + 16 * c, _mm512_or_si512(a, _mm512_slli_epi32(b, 16)));         \
            }                                                                                           \
        }                                                                                               \
        for (size_t i0 = 0; i0 < n; i0 += R) {                                                          \
            const size_t rows = n - i0 < R ? n - i0 : R;                                                \
            uint32_t q[R][D * 8]; /* the block's query rows, scaled, as bf16 pairs (bf16s in order) */   \
            for (int r = 0; r < R; r++) {                                                               \
                const float *row = q0 + (i0 + ((size_t)r < rows ? (size_t)r : 0)) * stride;             \
                for (int c = 0; c < D; c += 2) {                                                        \
                    __m512 low = _mm512_loadu_ps(row + 16 * c), high = _mm512_loadu_ps(row + 16 * c + 16); \
                    if (bias) {                                                                         \
                        low = _mm512_add_ps(low, qb[c]);                                                \
                        high = _mm512_add_ps(high, qb[c + 1]);                                          \
                    }                                                                                   \
                    low = _mm512_mul_ps(low, _mm512_set1_ps(scale));                                    \
                    high = _mm512_mul_ps(high, _mm512_set1_ps(scale));                                  \
                    _mm512_storeu_si512(q[r] + 8 * c, (__m512i)_mm512_cvtne2ps_pbh(high, low));         \
                }                                                                                       \
            }                                                                                           \
            /* Each row's largest score is kept as the scores are made (the padding's left out). */    \
            __m512 top[R];                                                                              \
            for (int r = 0; r < R; r++) top[r] = _mm512_set1_ps(-INFINITY);                             \
            /* Two blocks of 16 keys at a time: 2·R independent sums in flight, enough to cover the    \
               multiply-add's latency (R alone left the unit idle a third of the time). */               \
            size_t b = 0;                                                                               \
            for (; b + 1 < blocks; b += 2) {                                                            \
                __m512 acc[R], acc2[R];                                                                 \
                for (int r = 0; r < R; r++) acc[r] = acc2[r] = _mm512_setzero_ps();                     \
                const uint32_t *kp = keys + b * 16;                                                     \
                for (size_t p = 0; p < d / 2; p++, kp += padded) {                                      \
                    __m512bh k = (__m512bh)_mm512_loadu_si512(kp), k2 = (__m512bh)_mm512_loadu_si512(kp + 16); \
                    for (int r = 0; r < R; r++) {                                                       \
                        __m512bh w = (__m512bh)_mm512_set1_epi32((int)q[r][p]);                         \
                        acc[r] = _mm512_dpbf16_ps(acc[r], w, k);                                        \
                        acc2[r] = _mm512_dpbf16_ps(acc2[r], w, k2);                                     \
                    }                                                                                   \
                }                                                                                       \
                const __mmask16 real = b + 2 < blocks ? (__mmask16)0xffff : (__mmask16)(0xffffu >> (padded - n)); \
                for (int r = 0; r < R; r++) {                                                           \
                    _mm512_storeu_ps(scores + r * padded + b * 16, acc[r]);                             \
                    _mm512_storeu_ps(scores + r * padded + b * 16 + 16, acc2[r]);                       \
                    top[r] = _mm512_max_ps(top[r], acc[r]);                                             \
                    top[r] = _mm512_mask_max_ps(top[r], real, top[r], acc2[r]);                         \
                }                                                                                       \
            }                                                                                           \
            for (; b < blocks; b++) {                                                                   \
                __m512 acc[R];                                                                          \
                for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();                               \
                const uint32_t *kp = keys + b * 16;                                                     \
                for (size_t p = 0; p < d / 2; p++, kp += padded) {                                      \
                    __m512bh k = (__m512bh)_mm512_loadu_si512(kp);                                      \
                    for (int r = 0; r < R; r++)                                                         \
                        acc[r] = _mm512_dpbf16_ps(acc[r], (__m512bh)_mm512_set1_epi32((int)q[r][p]), k); \
                }                                                                                       \
                const __mmask16 real = b + 1 < blocks ? (__mmask16)0xffff : (__mmask16)(0xffffu >> (padded - n)); \
                for (int r = 0; r < R; r++) {                                                           \
                    _mm512_storeu_ps(scores + r * padded + b * 16, acc[r]);                             \
                    top[r] = _mm512_mask_max_ps(top[r], real, top[r], acc[r]);                          \
                }                                                                                       \
            }                                                                                           \
            float maximum[R], inverse[R];                                                               \
            __m512 sums[R];                                                                             \
            for (int r = 0; r < R; r++) maximum[r] = _mm512_reduce_max_ps(top[r]);                     \
            for (size_t r = 0; r < rows; r++)                                                           \
                sums[r] = softmax_bf16(scores + r * padded, weights + r * padded / 2, n, padded, maximum[r]); \
            for (size_t r = 0; r < rows; r++) inverse[r] = 1.0f / _mm512_reduce_add_ps(sums[r]);       \
            for (size_t r = rows; r < R; r++) memset(weights + r * padded / 2, 0, padded / 2 * sizeof(uint32_t)); \
            __m512 context[R][D];                                                                       \
            for (int r = 0; r < R; r++)                                                                 \
                for (int c = 0; c < D; c++) context[r][c] = _mm512_setzero_ps();                        \
            for (size_t jp = 0; jp < padded / 2; jp++) {                                                \
                const uint32_t *v = values + jp * d;                                                    \
                __m512bh pairs[D];                                                                      \
                for (int c = 0; c < D; c++) pairs[c] = (__m512bh)_mm512_loadu_si512(v + 16 * c);        \
                for (int r = 0; r < R; r++) {                                                           \
                    __m512bh w = (__m512bh)_mm512_set1_epi32((int)weights[r * padded / 2 + jp]);        \
                    for (int c = 0; c < D; c++) context[r][c] = _mm512_dpbf16_ps(context[r][c], w, pairs[c]); \
                }                                                                                       \
            }                                                                                           \
            for (size_t r = 0; r < rows; r++)                                                           \
                for (int c = 0; c < D; c++) {                                                           \
                    const size_t at = (base + i0 + r) * hidden + head * d + 16 * c;                     \
                    const __m512 value = _mm512_mul_ps(context[r][c], _mm512_set1_ps(inverse[r]));      \
                    if (half) _mm256_storeu_si256((__m256i *)(half + at), (__m256i)_mm512_cvtneps_pbh(value)); \
                    else _mm512_storeu_ps(out + at, value);                                             \
                }                                                                                       \
        }                                                                                               \
    }

ATTEND_BF16(attend_bf16_32, 8, 2)
ATTEND_BF16(attend_bf16_64, 8, 4)
#endif

#if defined(__x86_64__) && defined(__clang__)
// The next (sequence, head) pair's query, key and value columns, asked of the caches while this
// one is computed: each row's are a few lines 3·hidden floats apart, which the hardware's
// prefetchers do not foresee, and the pass's products have just pushed them out of the core's
// caches.
static inline void prefetch_item(const float *qkv, const int32_t *offsets, size_t hidden, size_t heads, size_t d, size_t item) {
    const size_t s = item / heads, head = item % heads, stride = 3 * hidden;
    const size_t base = (size_t)offsets[s], n = (size_t)(offsets[s + 1] - offsets[s]);
    for (size_t j = 0; j < n; j++) {
        const char *row = (const char *)(qkv + (base + j) * stride + head * d);
        for (size_t part = 0; part < 3; part++)
            for (size_t byte = 0; byte < d * sizeof(float); byte += 64) _mm_prefetch(row + part * hidden * sizeof(float) + byte, _MM_HINT_T1);
    }
}
#endif

int kb_attention_bf16_supported(size_t head_size) {
#if defined(__x86_64__) && defined(__clang__)
    __builtin_cpu_init();
    return (head_size == 32 || head_size == 64) && kb_variant_supported(KB_VARIANT_AVX512) && __builtin_cpu_supports("avx512bf16");
#else
    (void)head_size;
    return 0;
#endif
}

void kb_attention_bf16(const float *qkv, const float *qkv_bias, const int32_t *offsets, size_t hidden, size_t heads,
                       float scale, float *out, uint16_t *out_bf16, float *scratch, size_t item_begin, size_t item_end) {
#if defined(__x86_64__) && defined(__clang__)
    const size_t d = hidden / heads;
    for (size_t item = item_begin; item < item_end; item++) {
        size_t s = item / heads, head = item % heads;
        size_t base = (size_t)offsets[s], n = (size_t)(offsets[s + 1] - offsets[s]);
        if (item + 1 < item_end) prefetch_item(qkv, offsets, hidden, heads, d, item + 1);
        if (n == 0) continue;
        if (d == 32) attend_bf16_32(qkv, qkv_bias, base, n, hidden, head, scale, out, out_bf16, scratch);
        else attend_bf16_64(qkv, qkv_bias, base, n, hidden, head, scale, out, out_bf16, scratch);
    }
#else
    (void)qkv; (void)qkv_bias; (void)offsets; (void)hidden; (void)heads; (void)scale; (void)out; (void)out_bf16; (void)scratch; (void)item_begin;
    (void)item_end;
#endif
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
