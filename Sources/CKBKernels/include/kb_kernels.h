#ifndef KB_KERNELS_H
#define KB_KERNELS_H
// Small numeric kernels that Swift's SIMD types do not compile well (int8 widening arithmetic).
// Plain C, vectorised by the compiler; an AVX2 variant is chosen at run time when the CPU has it.
#include <stddef.h>
#include <stdint.h>

/// out[i] = Σ_j rows[i·d + j] · query[j] for i in 0..<n (int8 rows, int8 query, int32 sums).
void kb_i8_dot_rows(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out);

#endif
