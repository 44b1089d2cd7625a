#include "kb_encoder.h"

kb_variant kb_best_variant(void) {
    if (kb_variant_supported(KB_VARIANT_AVX512)) return KB_VARIANT_AVX512;
    if (kb_variant_supported(KB_VARIANT_AVX2)) return KB_VARIANT_AVX2;
    return KB_VARIANT_GENERIC;
}

int kb_variant_supported(kb_variant variant) {
    switch (variant) {
    case KB_VARIANT_GENERIC: return 1;
#if defined(__x86_64__) && defined(__clang__)
    case KB_VARIANT_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case KB_VARIANT_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("fma");
#endif
    default: return 0;
    }
}

#if defined(__GLIBC__)
#include <malloc.h>
void kb_release_free_memory(void) { malloc_trim(0); }
#else
void kb_release_free_memory(void) {}
#endif
