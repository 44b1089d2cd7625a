// The CPU's peak multiply-add rate, per core and on every core: fp32 FMA, bf16 pairs (vdpbf16ps)
// and int8 quadruples (vpdpbusd), 512 bits wide, 24 independent accumulators: more than latency ×
// ports need on the cores measured (12 had been thought enough; on an AMD EPYC whose two vCPUs are
// cores of their own, vdpbf16ps then ran at 1,000 G/s against 1,080 with 16 or 24 — the floor came
// out 8% too high). 28 spill. scripts/bench/bench-encoder-floor.sh compiles and runs it: the floor under
// any encoder.
// Prints one JSON object a line: {"kind", "threads", "gops"} (10⁹ operations a second; a
// multiply and an add count as two).
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx512vnni,fma")))
enum { ROUNDS = 10000000, ACC = 24 };
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static volatile float sink;

TARGET static void *fp32(void *arg) {
    (void)arg; __m512 a[ACC], x = _mm512_set1_ps(1.0001f), y = _mm512_set1_ps(0.9999f);
    for (int i = 0; i < ACC; i++) a[i] = _mm512_set1_ps((float)i);
    for (long r = 0; r < ROUNDS; r++) for (int i = 0; i < ACC; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
    float s = 0; for (int i = 0; i < ACC; i++) s += _mm512_reduce_add_ps(a[i]); sink = s; return NULL;
}
TARGET static void *bf16(void *arg) {
    (void)arg; __m512 a[ACC]; __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = x;
    for (int i = 0; i < ACC; i++) a[i] = _mm512_setzero_ps();
    for (long r = 0; r < ROUNDS; r++) for (int i = 0; i < ACC; i++) a[i] = _mm512_dpbf16_ps(a[i], x, y);
    float s = 0; for (int i = 0; i < ACC; i++) s += _mm512_reduce_add_ps(a[i]); sink = s; return NULL;
}
TARGET static void *int8(void *arg) {
    (void)arg; __m512i a[ACC], x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    for (int i = 0; i < ACC; i++) a[i] = _mm512_setzero_si512();
    for (long r = 0; r < ROUNDS; r++) for (int i = 0; i < ACC; i++) a[i] = _mm512_dpbusd_epi32(a[i], x, y);
    int s = 0; for (int i = 0; i < ACC; i++) s += _mm512_reduce_add_epi32(a[i]); sink = (float)s; return NULL;
}

// Operations (a multiply and an add count two) per instruction: 16 lanes × 1, × 2 pairs, × 4 bytes.
static void measure(const char *name, void *(*body)(void *), double operations, int threads) {
    pthread_t t[64]; double start = now();
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, body, NULL);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    double seconds = now() - start, total = operations * 2 * ROUNDS * ACC * threads;
    printf("{\"kind\":\"%s\",\"threads\":%d,\"gops\":%.1f}\n", name, threads, total / seconds / 1e9);
}

int main(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        fprintf(stderr, "cpu-peak: this CPU has no AVX-512; its peak is not measured\n");
        return 2;
    }
    // Only the kinds this CPU has (each is 512 bits wide).
    int has_bf16 = __builtin_cpu_supports("avx512bf16"), has_int8 = __builtin_cpu_supports("avx512vnni");
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 64) cores = 64;
    for (int threads = 1; threads <= cores; threads = threads == cores ? cores + 1 : cores) {
        measure("fp32", fp32, 16, threads);
        if (has_bf16) measure("bf16", bf16, 32, threads);
        if (has_int8) measure("int8", int8, 64, threads);
    }
    return 0;
}
