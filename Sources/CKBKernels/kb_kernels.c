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

void kb_i8_dot_picked(const int8_t *rows, const uint32_t *picked, size_t count, size_t d, const int8_t *query, int32_t *out) {
    for (size_t i = 0; i < count; i++) {
        // The next rows' first lines are fetched while this one is summed.
        if (i + 8 < count) {
            const char *ahead = (const char *)(rows + (size_t)picked[i + 8] * d);
            for (size_t j = 0; j < d; j += 64) __builtin_prefetch(ahead + j);
        }
        kb_i8_dot_rows(rows + (size_t)picked[i] * d, 1, d, query, out + i);
    }
}

/// Word `w` of row `r` in sign codes laid out in blocks of 8 rows (see kb_kernels.h).
static inline uint64_t sign_word(const uint64_t *blocks, size_t words, size_t r, size_t w) {
    return blocks[(r / 8) * 8 * words + w * 8 + r % 8];
}

static int32_t sign_plane_row(const uint64_t *blocks, size_t words, size_t r, const uint64_t *planes, size_t bits) {
    int32_t sum = 0;
    for (size_t w = 0; w < words; w++) {
        uint64_t v = sign_word(blocks, words, r, w);
        for (size_t p = 0; p < bits; p++) sum += (2 << p) * __builtin_popcountll(v & planes[p * words + w]);
        sum -= ((1 << bits) - 1) * __builtin_popcountll(v);
    }
    return sum;
}

#if defined(__x86_64__) && defined(__clang__)
/// AVX-512 VPOPCNTDQ: a block's word `w` of its 8 rows is one register; each plane, broadcast,
/// masks it, and a popcount a plane (and one of the word) adds up the 8 rows' sums side by side
/// (no per-row reduction). `bits` is a constant where it is called, so the planes' loops unroll.
__attribute__((target("avx512f,avx512vpopcntdq"), always_inline))
static inline void sign_plane_rows_avx512(const uint64_t *blocks, size_t n, size_t words, const uint64_t *planes, int32_t *out,
                                          const size_t bits) {
    size_t full = n / 8;
    for (size_t block = 0; block < full; block++) {
        const uint64_t *b = blocks + block * 8 * words;
        __m512i sums[8], all = _mm512_setzero_si512();
        for (size_t p = 0; p < bits; p++) sums[p] = _mm512_setzero_si512();
        for (size_t w = 0; w < words; w++) {
            __m512i v = _mm512_loadu_si512((const void *)(b + w * 8));
            for (size_t p = 0; p < bits; p++) {
                __m512i plane = _mm512_set1_epi64((long long)planes[p * words + w]);
                sums[p] = _mm512_add_epi64(sums[p], _mm512_popcnt_epi64(_mm512_and_si512(v, plane)));
            }
            all = _mm512_add_epi64(all, _mm512_popcnt_epi64(v));
        }
        // Σ_p 2^(p+1)·sums[p] − (2^bits − 1)·all
        __m512i total = _mm512_sub_epi64(all, _mm512_slli_epi64(all, (unsigned)bits));
        for (size_t p = 0; p < bits; p++) total = _mm512_add_epi64(total, _mm512_slli_epi64(sums[p], (unsigned)(p + 1)));
        _mm256_storeu_si256((__m256i *)(out + block * 8), _mm512_cvtepi64_epi32(total));
    }
    for (size_t r = full * 8; r < n; r++) out[r] = sign_plane_row(blocks, words, r, planes, bits);
}

__attribute__((target("avx512f,avx512vpopcntdq")))
static void sign_plane_rows_avx512_any(const uint64_t *blocks, size_t n, size_t words, const uint64_t *planes, int32_t *out, size_t bits) {
    switch (bits) {
    case 1: sign_plane_rows_avx512(blocks, n, words, planes, out, 1); break;
    case 2: sign_plane_rows_avx512(blocks, n, words, planes, out, 2); break;
    case 3: sign_plane_rows_avx512(blocks, n, words, planes, out, 3); break;
    case 4: sign_plane_rows_avx512(blocks, n, words, planes, out, 4); break;
    case 5: sign_plane_rows_avx512(blocks, n, words, planes, out, 5); break;
    case 6: sign_plane_rows_avx512(blocks, n, words, planes, out, 6); break;
    case 7: sign_plane_rows_avx512(blocks, n, words, planes, out, 7); break;
    default: sign_plane_rows_avx512(blocks, n, words, planes, out, 8); break;
    }
}
#endif

int32_t kb_sign_plane_rows(const uint64_t *blocks, size_t n, size_t words, const uint64_t *planes, size_t bits, int32_t *out) {
    if (bits < 1) bits = 1;
    if (bits > 8) bits = 8;
#if defined(__x86_64__) && defined(__clang__)
    static int has_popcnt512 = -1;
    if (has_popcnt512 < 0) {
        has_popcnt512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") ? 1 : 0;
    }
    if (has_popcnt512) sign_plane_rows_avx512_any(blocks, n, words, planes, out, bits);
    else for (size_t r = 0; r < n; r++) out[r] = sign_plane_row(blocks, words, r, planes, bits);
#else
    for (size_t r = 0; r < n; r++) out[r] = sign_plane_row(blocks, words, r, planes, bits);
#endif
    int32_t best = INT32_MIN;
    for (size_t i = 0; i < n; i++) best = out[i] > best ? out[i] : best;
    return best;
}

static size_t top_rows_exact(const int32_t *scores, size_t n, size_t r, uint32_t *rows) {
    if (r >= n) {
        for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)i;
        return n;
    }
    if (r == 0) return 0;
    // A histogram of at most 4,096 bins over the scores' range; the bin that holds the r-th
    // largest score is the boundary: every row above it is taken, then rows of it in order.
    int32_t lowest = scores[0], highest = scores[0];
    for (size_t i = 1; i < n; i++) {
        if (scores[i] < lowest) lowest = scores[i];
        if (scores[i] > highest) highest = scores[i];
    }
    unsigned shift = 0;
    while ((((int64_t)highest - lowest) >> shift) >= 4096) shift++;
    size_t bins = (size_t)((((int64_t)highest - lowest) >> shift) + 1);
    uint32_t counts[4096] = {0};
    for (size_t i = 0; i < n; i++) counts[((int64_t)scores[i] - lowest) >> shift]++;
    size_t above = 0, boundary = bins - 1;
    while (above + counts[boundary] < r) { above += counts[boundary]; boundary--; }
    // Every row above the boundary bin, then the best of the boundary bin's rows.
    size_t taken = 0, inBoundary = 0;
    uint32_t *boundaryRows = rows + above;
    for (size_t i = 0; i < n; i++) {
        size_t bin = (size_t)(((int64_t)scores[i] - lowest) >> shift);
        if (bin > boundary) rows[taken++] = (uint32_t)i;
        else if (bin == boundary) inBoundary++;
    }
    if (shift == 0 || inBoundary == r - above) {
        for (size_t i = 0; i < n && taken < r; i++) {
            if ((size_t)(((int64_t)scores[i] - lowest) >> shift) == boundary) boundaryRows[taken++ - above] = (uint32_t)i;
        }
        return taken;
    }
    // The boundary bin spans 2^shift values (2^20 at most for 32-bit scores): a second
    // histogram, one bin per value, finds the exact cut inside it.
    int32_t base = (int32_t)(lowest + ((int64_t)boundary << shift));
    size_t width = (size_t)1 << shift;
    uint32_t *exact = calloc(width, sizeof(uint32_t));
    if (!exact) {   // no memory for the refinement: the boundary bin's rows in order
        for (size_t i = 0; i < n && taken < r; i++) {
            if ((size_t)(((int64_t)scores[i] - lowest) >> shift) == boundary) boundaryRows[taken++ - above] = (uint32_t)i;
        }
        return taken;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t offset = (int64_t)scores[i] - base;
        if (offset >= 0 && (size_t)offset < width) exact[offset]++;
    }
    size_t wanted = r - above, cut = width - 1, better = 0;
    while (better + exact[cut] < wanted) { better += exact[cut]; cut--; }
    size_t atCut = wanted - better;
    free(exact);
    for (size_t i = 0; i < n && taken < r; i++) {
        int64_t offset = (int64_t)scores[i] - base;
        if (offset < 0 || (size_t)offset >= width) continue;
        if ((size_t)offset > cut) rows[taken++] = (uint32_t)i;
        else if ((size_t)offset == cut && atCut > 0) { rows[taken++] = (uint32_t)i; atCut--; }
    }
    return taken;
}

size_t kb_top_rows(const int32_t *scores, size_t n, size_t r, uint32_t *rows) {
    // Many rows, few wanted: every 16th score estimates a threshold a little below the r-th
    // largest (the sample's (r/16·2 + 32)-th largest); the rows at or above it are gathered in one
    // vector pass, and the exact selection runs over them alone. The estimate rarely misses (fewer
    // than r rows reach it, or far more than expected do): then the exact selection over all rows.
    if (n >= 16384 && r > 0 && r * 16 <= n) {
        size_t m = n / 16, s = (r / 16) * 2 + 32, capacity = 4 * r + 4096;
        int32_t *sample = malloc(m * sizeof(int32_t) + capacity * sizeof(int32_t));
        // The gathered rows, then the sample's best (s) and later the candidates' best (r).
        uint32_t *found = malloc((capacity + (s > r ? s : r)) * sizeof(uint32_t));
        if (sample && found) {
            for (size_t i = 0; i < m; i++) sample[i] = scores[i * 16];
            uint32_t *sampleRows = found + capacity;
            size_t taken = top_rows_exact(sample, m, s, sampleRows);
            int32_t threshold = INT32_MAX;
            for (size_t i = 0; i < taken; i++) threshold = sample[sampleRows[i]] < threshold ? sample[sampleRows[i]] : threshold;
            size_t count = kb_rows_at_least(scores, n, threshold, found, capacity);
            if (count >= r && count <= capacity) {
                int32_t *candidateScores = sample;   // the sample is no longer needed
                for (size_t i = 0; i < count; i++) candidateScores[i] = scores[found[i]];
                uint32_t *positions = found + capacity;
                size_t picked = top_rows_exact(candidateScores, count, r, positions);
                for (size_t i = 0; i < picked; i++) rows[i] = found[positions[i]];
                free(sample);
                free(found);
                return picked;
            }
        }
        free(sample);
        free(found);
    }
    return top_rows_exact(scores, n, r, rows);
}

#if defined(__x86_64__) && defined(__clang__)
/// `kb_rows_at_least`'s AVX-512 part: 16 scores compared at a time, the numbers of those at
/// least `threshold` stored packed (`vpcompressd`). Returns how many it stored, capacity + 1
/// when they would not fit, and sets `*next` to the first row it did not look at.
__attribute__((target("avx512f")))
static size_t rows_at_least_avx512(const int32_t *scores, size_t n, int32_t threshold, uint32_t *rows, size_t capacity, size_t *next) {
    const __m512i bound = _mm512_set1_epi32(threshold), step = _mm512_set1_epi32(16);
    __m512i index = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    size_t count = 0, i = 0;
    for (; i + 16 <= n; i += 16) {
        __mmask16 at_least = _mm512_cmpge_epi32_mask(_mm512_loadu_si512((const void *)(scores + i)), bound);
        if (at_least) {
            size_t found = (size_t)__builtin_popcount(at_least);
            if (count + found > capacity) return capacity + 1;
            _mm512_mask_compressstoreu_epi32(rows + count, at_least, index);
            count += found;
        }
        index = _mm512_add_epi32(index, step);
    }
    *next = i;
    return count;
}
#endif

size_t kb_rows_at_least(const int32_t *scores, size_t n, int32_t threshold, uint32_t *rows, size_t capacity) {
    size_t count = 0, i = 0;
#if defined(__x86_64__) && defined(__clang__)
    static int has_avx512 = -1;
    if (has_avx512 < 0) has_avx512 = __builtin_cpu_supports("avx512f") ? 1 : 0;
    if (has_avx512) {
        count = rows_at_least_avx512(scores, n, threshold, rows, capacity, &i);
        if (count > capacity) return capacity + 1;
    }
#endif
    for (; i < n; i++) {
        if (scores[i] < threshold) continue;
        if (count == capacity) return capacity + 1;
        rows[count++] = (uint32_t)i;
    }
    return count;
}
