#ifndef KB_KERNELS_H
#define KB_KERNELS_H
// Small numeric kernels that Swift's SIMD types do not compile well (int8 widening arithmetic,
// bit-masked sums). Plain C, with AVX-512 variants chosen at run time when the CPU has them.
#include <stddef.h>
#include <stdint.h>

/// out[i] = Σ_j rows[i·d + j] · query[j] for i in 0..<n (int8 rows, int8 query, int32 sums).
void kb_i8_dot_rows(const int8_t *rows, size_t n, size_t d, const int8_t *query, int32_t *out);

/// out[i] = Σ_j rows[picked[i]·d + j] · query[j] for i in 0..<count: the rows named by `picked`.
void kb_i8_dot_picked(const int8_t *rows, const uint32_t *picked, size_t count, size_t d, const int8_t *query, int32_t *out);

/// The sign stage's scores: out[i] = Σ_j q_j · bit j of row i, for a query in 2^bits levels
/// q_j = 2·level_j − (2^bits − 1) (odd values from −(2^bits − 1) to 2^bits − 1), whose bit planes
/// are `planes` (`words` words of each level's bit 0, then of bit 1, …; 1 ≤ bits ≤ 8). Rows of
/// `words` 64-bit words each (bit j of a row is bit j % 64 of its word j / 64), laid out in blocks
/// of 8 rows, word by word: word w of row r is `blocks[(r / 8)·8·words + w·8 + r % 8]` (a block of
/// 8 rows starting at a row that is a multiple of 8 is at `blocks + row·words`). Returns the
/// largest out[i] (INT32_MIN when n is 0).
int32_t kb_sign_plane_rows(const uint64_t *blocks, size_t n, size_t words, const uint64_t *planes, size_t bits, int32_t *out);

/// Writes into `rows` the numbers of the `r` largest of `scores[0..<n]` (ties broken by
/// position; in no particular order) and returns how many it wrote: min(r, n).
size_t kb_top_rows(const int32_t *scores, size_t n, size_t r, uint32_t *rows);

/// Writes into `rows` the numbers of the rows whose score is at least `threshold`, in order, and
/// returns how many there are; stops at `capacity` rows and then returns `capacity + 1`.
size_t kb_rows_at_least(const int32_t *scores, size_t n, int32_t threshold, uint32_t *rows, size_t capacity);

#endif
