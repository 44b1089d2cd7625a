#include "kb_kernels.h"

static inline void dot_rows(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
    for (size_t i = 0; i < n; i++) {
        const int8_t *row = rows + i * d;
        int32_t sum = 0;
        for (size_t j = 0; j < d; j++) sum += (int32_t)row[j] * (int32_t)query[j];
        out[i] = sum;
    }
}

#if defined(__x86_64__) && defined(__clang__)
__attribute__((target("avx2")))
static void dot_rows_avx2(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
    dot_rows(rows, n, d, query, out);
}
#endif

#if defined(__x86_64__) && defined(__clang__)
#include <immintrin.h>

/// The 16 int32 lanes of `v` summed into 4 (lanes i, i+4, i+8, i+12 added).
__attribute__((target("avx512f")))
static inline __m128i fold_to_128(__m512i v) {
    __m256i half = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
}

/// AVX-512 VNNI: `vpdpbusd` multiplies unsigned by signed bytes, so each row is made unsigned
/// on the fly (r ^ 0x80 = r + 128) and 128·Σq, the same for every row, is taken off the sums.
/// Four rows at a time, each in its own accumulator; `d` must be a multiple of 64.
__attribute__((target("avx512f,avx512bw,avx512vnni")))
static void dot_rows_vnni(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
    int32_t query_sum = 0;
    for (size_t j = 0; j < d; j++) query_sum += query[j];
    const int32_t correction = 128 * query_sum;
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int8_t *r = rows + i * d;
        __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
        __m512i a2 = _mm512_setzero_si512(), a3 = _mm512_setzero_si512();
        const char *ahead = (const char *)(r + 16 * d);
        for (size_t j = 0; j < d; j += 64) {
            // The rows four steps ahead, a line of each per chunk: the hardware prefetcher alone
            // leaves this loop waiting on memory.
            if (i + 20 <= n) {
                _mm_prefetch(ahead + j, _MM_HINT_T0);
                _mm_prefetch(ahead + d + j, _MM_HINT_T0);
                _mm_prefetch(ahead + 2 * d + j, _MM_HINT_T0);
                _mm_prefetch(ahead + 3 * d + j, _MM_HINT_T0);
            }
            __m512i q = _mm512_loadu_si512((const void *)(query + j));
            a0 = _mm512_dpbusd_epi32(a0, _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + j)), flip), q);
            a1 = _mm512_dpbusd_epi32(a1, _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + d + j)), flip), q);
            a2 = _mm512_dpbusd_epi32(a2, _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + 2 * d + j)), flip), q);
            a3 = _mm512_dpbusd_epi32(a3, _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + 3 * d + j)), flip), q);
        }
        // Four rows' 4-lane partial sums, then two horizontal adds: one sum per row.
        __m128i s01 = _mm_hadd_epi32(fold_to_128(a0), fold_to_128(a1));
        __m128i s23 = _mm_hadd_epi32(fold_to_128(a2), fold_to_128(a3));
        __m128i sums = _mm_sub_epi32(_mm_hadd_epi32(s01, s23), _mm_set1_epi32(correction));
        _mm_storeu_si128((__m128i *)(out + i), sums);
    }
    for (; i < n; i++) {
        const int8_t *r = rows + i * d;
        __m512i a = _mm512_setzero_si512();
        for (size_t j = 0; j < d; j += 64) {
            a = _mm512_dpbusd_epi32(a, _mm512_xor_si512(_mm512_loadu_si512((const void *)(r + j)), flip),
                                    _mm512_loadu_si512((const void *)(query + j)));
        }
        out[i] = _mm512_reduce_add_epi32(a) - correction;
    }
}
#endif

static void dot_rows_default(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
    dot_rows(rows, n, d, query, out);
}

void kb_i8_dot_rows(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
#if defined(__x86_64__) && defined(__clang__)
    static int has_avx2 = -1, has_vnni = -1;
    if (has_vnni < 0) {
        has_vnni = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni") ? 1 : 0;
    }
    if (has_vnni && d % 64 == 0) { dot_rows_vnni(rows, n, d, query, out); return; }
    if (has_avx2 < 0) has_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (has_avx2) { dot_rows_avx2(rows, n, d, query, out); return; }
#endif
    dot_rows_default(rows, n, d, query, out);
}
