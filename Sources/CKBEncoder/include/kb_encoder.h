#ifndef KB_ENCODER_H
#define KB_ENCODER_H
// The transformer encoder's numeric kernels, in plain C (compiled with -O3; AVX-512 and AVX2
// variants are chosen at run time). Only KBEmbed imports this module.
//
// Every output element of kb_linear is the same chain of fused multiply-adds over k, in the same
// order, whatever the number of rows, the tile a row falls in, the thread or the instruction set:
// a text's embedding does not depend on what else shares its forward pass.
#include <stddef.h>
#include <stdint.h>

/// Which instruction set a kernel runs with.
typedef enum {
    KB_VARIANT_GENERIC = 0,
    KB_VARIANT_AVX2 = 1,
    KB_VARIANT_AVX512 = 2,
} kb_variant;

/// The fastest variant this CPU (and OS) supports.
kb_variant kb_best_variant(void);

/// Whether this CPU can run `variant`.
int kb_variant_supported(kb_variant variant);

/// Hands the memory the allocator holds free (in every thread's arena) back to the kernel
/// (glibc's malloc_trim; nothing elsewhere).
void kb_release_free_memory(void);

/// Columns per packed weight panel for a variant (32 for AVX-512, 16 otherwise).
size_t kb_linear_panel_width(kb_variant variant);

/// Floats needed to pack an [n × k] weight matrix for a variant.
size_t kb_linear_packed_count(kb_variant variant, size_t n, size_t k);

/// Number of panels of an n-column output for a variant (the unit kb_linear's range counts in).
size_t kb_linear_panels(kb_variant variant, size_t n);

/// Packs weight [n × k] (row-major: one row per output column, as PyTorch stores nn.Linear)
/// into panels of kb_linear_panel_width columns, k-major inside a panel, zero-padded.
void kb_linear_pack(kb_variant variant, const float *weight, size_t n, size_t k, float *packed);

/// What kb_linear applies to each output element after the bias.
typedef enum {
    KB_ACTIVATION_NONE = 0,
    /// Exact GELU, x·Φ(x), through an erf approximation within 2e-7.
    KB_ACTIVATION_GELU = 1,
} kb_activation;

/// out[m × n] = activation(x[m × k] · weightᵀ + bias), for the output panels
/// [panel_begin, panel_end) only (so that callers can split one product across threads).
/// `packed` comes from kb_linear_pack with the same variant.
void kb_linear(kb_variant variant, const float *x, size_t m, size_t k, const float *packed, const float *bias,
               size_t n, float *out, size_t panel_begin, size_t panel_end, kb_activation activation);

/// x[rows × width] = LayerNorm(x + (residual + residual_bias)) row by row (residual may be NULL;
/// residual_bias [width], the bias of the product that made the residual, may be NULL). `width`
/// must be a multiple of 16.
void kb_add_layer_norm(kb_variant variant, float *x, const float *residual, const float *residual_bias, size_t rows,
                       size_t width, const float *weight, const float *bias, float eps);

/// kb_add_layer_norm (AVX-512), and the result rounded to bf16 into `copy` [rows × width] as
/// kb_matmul_run rounds an fp32 input, for a bf16 product that reads it (`input_bf16`) in the
/// same pass. Only where kb_precision_supported(KB_PRECISION_BF16) says so.
void kb_add_layer_norm_bf16(float *x, const float *residual, const float *residual_bias, size_t rows, size_t width,
                            const float *weight, const float *bias, float eps, uint16_t *copy);

/// Floats of scratch kb_attention needs per thread for sequences of up to `longest` tokens.
size_t kb_attention_scratch_count(size_t longest, size_t head_size);

/// Scaled dot-product self-attention over packed sequences. qkv is [tokens × 3·hidden] (each
/// token's query, key and value projections side by side); sequence s spans the tokens
/// offsets[s] ..< offsets[s + 1]; out is [tokens × hidden]. Work items are (sequence, head)
/// pairs numbered s · heads + head; this call does items [item_begin, item_end).
void kb_attention(kb_variant variant, const float *qkv, const int32_t *offsets, size_t hidden, size_t heads, float scale,
                  float *out, float *scratch, size_t item_begin, size_t item_end);

/// Whether kb_attention_bf16 runs here: AVX-512 BF16, heads 32 or 64 wide.
int kb_attention_bf16_supported(size_t head_size);

/// kb_attention with both products on bf16 inputs and fp32 sums (softmax in fp32), for the
/// reduced-precision encoder. Only where kb_attention_bf16_supported says so. With `out_bf16`,
/// the result is written there [tokens × hidden], rounded to bf16 as kb_matmul_run rounds an
/// fp32 input, instead of to `out` — for a bf16 product that reads it (`input_bf16`).
/// `qkv_bias` [3·hidden], the QKV product's bias (NULL for none), is added to each projection
/// as it is read (the product then need not make a pass over its output for it).
void kb_attention_bf16(const float *qkv, const float *qkv_bias, const int32_t *offsets, size_t hidden, size_t heads,
                       float scale, float *out, uint16_t *out_bf16, float *scratch, size_t item_begin, size_t item_end);

// ---- reduced-precision products on oneDNN (kb_matmul.c) ----

/// The arithmetic of the linear layers.
typedef enum {
    KB_PRECISION_FP32 = 0,
    /// bfloat16 inputs and weights, fp32 sums (AVX-512 BF16).
    KB_PRECISION_BF16 = 1,
    /// int8 weights per output column, u8 inputs per row, exact int32 sums (AVX-512 VNNI).
    KB_PRECISION_INT8 = 2,
} kb_precision;

/// Whether this CPU has the instructions for `precision` (fp32 always).
int kb_precision_supported(kb_precision precision);

/// A linear layer's weights converted once for a bf16 or int8 product.
typedef struct kb_matmul kb_matmul;

/// Converts weight [n × k] (one row per output column) for `precision` (bf16 or int8). NULL, with
/// a message in `error`, when oneDNN cannot make the product.
/// `activation` follows the product and its bias. bf16 only: `bf16_output` makes the product
/// write its result as bf16 (rounded to nearest even, after the bias and the activation) instead
/// of fp32, for a bf16 product that reads it (kb_matmul_run's `input_bf16`).
/// int8 only: `input_scales` (k values, or NULL for none) multiply each input column before its
/// row is quantised — the caller divides the weights' columns by the same values, so the product
/// is unchanged while outlier columns are brought into range (SmoothQuant's migration).
kb_matmul *kb_matmul_create(kb_precision precision, const float *weight, size_t n, size_t k, const float *input_scales,
                            kb_activation activation, int bf16_output, char *error, size_t error_size);

void kb_matmul_free(kb_matmul *matmul);

/// Makes and runs a small product of `precision` (bf16 or int8; anything else does nothing), so
/// that oneDNN's process-wide state exists from then on. A process's exit tears that state down
/// before it runs the exit handlers registered earlier: a caller that will wait at exit for
/// products being made on another thread primes first, then registers its handler.
void kb_matmul_prime(kb_precision precision);

/// Bytes of scratch kb_matmul_run needs for `rows` input rows.
size_t kb_matmul_scratch_bytes(const kb_matmul *matmul, size_t rows);

/// out[rows × n] = activation(x[rows × k] · weightᵀ + bias) on up to `threads` threads, using
/// `scratch` (kb_matmul_scratch_bytes). `x` is fp32, or (bf16 products only, `input_bf16`) the
/// bf16 result of a product made with `bf16_output`; `out` is fp32, or bf16 for such a product
/// (which needs room for rows × n floats all the same: the fp32 sums are rounded in place).
/// `bias` may be NULL (none) for a bf16 product with no activation and an fp32 result: the sums
/// are then left as oneDNN writes them, for a consumer that adds the bias itself.
/// A row's result does not depend on the other rows. Returns 0 with a message in `error` when
/// oneDNN fails.
int kb_matmul_run(const kb_matmul *matmul, const void *x, int input_bf16, size_t rows, const float *bias, void *out,
                  void *scratch, int threads, char *error, size_t error_size);

#endif
