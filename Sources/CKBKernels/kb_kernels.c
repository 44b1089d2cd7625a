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

static void dot_rows_default(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
    dot_rows(rows, n, d, query, out);
}

void kb_i8_dot_rows(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out) {
#if defined(__x86_64__) && defined(__clang__)
    static int has_avx2 = -1;
    if (has_avx2 < 0) has_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (has_avx2) { dot_rows_avx2(rows, n, d, query, out); return; }
#endif
    dot_rows_default(rows, n, d, query, out);
}
