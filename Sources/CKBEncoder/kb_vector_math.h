#ifndef KB_VECTOR_MATH_H
#define KB_VECTOR_MATH_H
// 16-lane helpers the encoder's kernels share (private to CKBEncoder).
#include <string.h>

typedef float v16 __attribute__((ext_vector_type(16)));

// erf(x), |error| < 2e-7 (the rational approximation Eigen uses for floats). Helpers take
// pointers, not vector arguments: the vector ABI differs between the AVX2 and AVX-512 callers.
static inline __attribute__((always_inline)) void erf16(v16 *a) {
    v16 x = __builtin_elementwise_min(__builtin_elementwise_max(*a, (v16)-4.0f), (v16)4.0f);
    v16 x2 = x * x;
    v16 p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
    p = x2 * p + -2.10102402082508e-06f;
    p = x2 * p + -5.69250639462346e-05f;
    p = x2 * p + -7.34990630326855e-04f;
    p = x2 * p + -2.95459980854025e-03f;
    p = x2 * p + -1.60960333262415e-02f;
    p = x * p;
    v16 q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
    q = x2 * q + -1.68282697438203e-03f;
    q = x2 * q + -7.37332916720468e-03f;
    q = x2 * q + -1.42647390514189e-02f;
    *a = p / q;
}

// Exact GELU, x·Φ(x) = ½x(1 + erf(x/√2)), in place.
static inline __attribute__((always_inline)) void gelu16(v16 *x) {
    v16 e = *x * 0.70710678118654752f;
    erf16(&e);
    *x = 0.5f * *x * (1.0f + e);
}

#endif
