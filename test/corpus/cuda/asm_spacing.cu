// Inline PTX written the way CUTLASS, FasterTransformer/TensorRT-LLM and
// hashing kernels write it, built with -O3 -lineinfo. nvcc copies asm text
// verbatim into the PTX, so its spacing reaches the importer unchanged.
//
// Exercises: opcode and modifiers separated by blanks or tabs
// (`lop3 .b32 %0, ...`, `xor  .b32`, `prmt .b32`, `shf.r.wrap\t.b32`),
// tabs between opcode and operands, operands without blanks after commas,
// trailing blanks before `;`, `{ .reg .pred p; setp...; @p ...; }` scopes
// (CUTLASS global_load/global_store and cp.async zfill), scopes declaring
// several registers or a parameterised range (`.reg .b32 u<4>;`), nested
// scopes, `@!p` guards, `"n"` immediates (lop3 LUTs), vector operands
// `{%0, %1}`, and carry chains (add.cc/addc, mad.lo.cc/madc) joined with
// "\n\t".
#include <cuda_fp16.h>
#include <cstdint>

// CUTLASS mixed-input GEMM: turn a pair of negative-scale words into
// positive ones (lop3 LUT (0xf0 & 0xcc) ^ 0xaa, then xor).
__device__ __forceinline__ void positive_scales(const uint32_t (&neg)[2], uint32_t (&pos)[2]) {
  constexpr uint32_t immLut = (0xf0 & 0xcc) ^ 0xaa;
  asm volatile("{\n"
               "  lop3 .b32 %0, %2, %4, %5, %6;\n"
               "  xor  .b32 %1, %3, %5;        \n"
               "}\n"
               : "=r"(pos[0]), "=r"(pos[1])
               : "r"(neg[0]), "r"(neg[1]), "n"(0xFFFFFF00), "n"(0x80808080), "n"(immLut));
}

// FasterTransformer-style int4 -> half2 x4 conversion with magic numbers.
__device__ __forceinline__ void int4x8_to_half2x4(uint32_t source, uint32_t (&h)[4]) {
  constexpr uint32_t immLut = (0xf0 & 0xcc) | 0xaa;
  constexpr uint32_t BOTTOM_MASK = 0x000f000f;
  constexpr uint32_t TOP_MASK = 0x00f000f0;
  constexpr uint32_t I4s_TO_F16s_MAGIC_NUM = 0x64006400;
  const uint32_t top_i4s = source >> 8;
  asm volatile("lop3.b32 %0, %1, %2, %3, %4;\n"
               : "=r"(h[0])
               : "r"(source), "n"(BOTTOM_MASK), "n"(I4s_TO_F16s_MAGIC_NUM), "n"(immLut));
  asm volatile("lop3.b32\t%0, %1, %2, %3, %4;\n"
               : "=r"(h[1])
               : "r"(source), "n"(TOP_MASK), "n"(I4s_TO_F16s_MAGIC_NUM), "n"(immLut));
  asm volatile("lop3 .b32 %0,%1,%2,%3,%4;\n"
               : "=r"(h[2])
               : "r"(top_i4s), "n"(BOTTOM_MASK), "n"(I4s_TO_F16s_MAGIC_NUM), "n"(immLut));
  asm volatile("lop3.b32 %0, %1, %2, %3, %4 ;\n"
               : "=r"(h[3])
               : "r"(top_i4s), "n"(TOP_MASK), "n"(I4s_TO_F16s_MAGIC_NUM), "n"(immLut));
  constexpr uint32_t FP16_TOP_MAGIC_NUM = 0x64086408;
  constexpr uint32_t ONE_SIXTEENTH = 0x2c002c00;
  constexpr uint32_t NEG_72 = 0xd480d480;
  asm volatile("sub.f16x2 %0, %1, %2;\n" : "=r"(h[0]) : "r"(h[0]), "r"(FP16_TOP_MAGIC_NUM));
  asm volatile("fma.rn.f16x2 %0, %1, %2, %3;\n"
               : "=r"(h[1])
               : "r"(h[1]), "r"(ONE_SIXTEENTH), "r"(NEG_72));
  asm volatile("sub.f16x2\t%0, %1, %2;\n" : "=r"(h[2]) : "r"(h[2]), "r"(FP16_TOP_MAGIC_NUM));
  asm volatile("fma.rn .f16x2 %0, %1, %2, %3;\n"
               : "=r"(h[3])
               : "r"(h[3]), "r"(ONE_SIXTEENTH), "r"(NEG_72));
}

__global__ void mixed_input_dequant(const uint32_t *__restrict__ packed,
                                    const uint32_t *__restrict__ neg_scales,
                                    uint4 *__restrict__ out, uint2 *__restrict__ scales_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uint32_t h[4];
  int4x8_to_half2x4(packed[i], h);
  uint32_t neg[2] = {neg_scales[2 * i], neg_scales[2 * i + 1]};
  uint32_t pos[2];
  positive_scales(neg, pos);
  out[i] = make_uint4(h[0], h[1], h[2], h[3]);
  scales_out[i] = make_uint2(pos[0], pos[1]);
}

// CUTLASS arch/memory.h: predicated 16-byte global load and store.
__device__ __forceinline__ void global_load16(uint4 &d, const void *ptr, bool pred_guard) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %5, 0;\n"
               "  mov.b32 %0, %6;\n"
               "  mov.b32 %1, %7;\n"
               "  mov.b32 %2, %8;\n"
               "  mov.b32 %3, %9;\n"
               "  @p ld.global.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               "}\n"
               : "=r"(d.x), "=r"(d.y), "=r"(d.z), "=r"(d.w)
               : "l"(ptr), "r"((int)pred_guard), "r"(d.x), "r"(d.y), "r"(d.z), "r"(d.w));
}
__device__ __forceinline__ void global_store16(const uint4 &d, void *ptr, bool pred_guard) {
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %5, 0;\n"
               "  @p st.global.v4.u32 [%0], {%1, %2, %3, %4};\n"
               "}\n"
               :
               : "l"(ptr), "r"(d.x), "r"(d.y), "r"(d.z), "r"(d.w), "r"((int)pred_guard));
}
// CUTLASS arch/memory_sm80.h: cp_async_zfill.
__device__ __forceinline__ void cp_async_zfill16(void *smem_ptr, const void *global_ptr,
                                                 bool pred_guard) {
  unsigned smem_int_ptr = static_cast<unsigned>(__cvta_generic_to_shared(smem_ptr));
  int src_in_bytes = pred_guard ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], %2, %3;\n" ::"r"(smem_int_ptr),
               "l"(global_ptr), "n"(16), "r"(src_in_bytes));
}
__device__ __forceinline__ void cp_async_pred4(void *smem_ptr, const void *global_ptr,
                                               bool pred_guard) {
  unsigned smem_int_ptr = static_cast<unsigned>(__cvta_generic_to_shared(smem_ptr));
  asm volatile("{\n"
               "  .reg .pred p;\n"
               "  setp.ne.b32 p, %0, 0;\n"
               "  @p cp.async.ca.shared.global [%1], [%2], %3;\n"
               "}\n" ::"r"((int)pred_guard),
               "r"(smem_int_ptr), "l"(global_ptr), "n"(4));
}

// A tile copy through shared memory with the predicated CUTLASS primitives;
// out-of-range rows keep (load) or skip (store) their values.
__global__ void __launch_bounds__(128)
    predicated_tile_copy(const uint4 *__restrict__ src, const float *__restrict__ tail,
                         uint4 *__restrict__ dst, float *__restrict__ tail_out, int rows) {
  __shared__ alignas(16) uint4 stage[2][128];
  __shared__ float tail_stage[128];
  const int r = blockIdx.x * 128 + threadIdx.x;
  const bool in_range = r < rows;
  cp_async_zfill16(&stage[0][threadIdx.x], src + min(r, rows - 1), in_range);
  cp_async_pred4(&tail_stage[threadIdx.x], tail + min(r, rows - 1), in_range);
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group %0;\n" ::"n"(0));
  __syncthreads();
  uint4 v = stage[0][(threadIdx.x + 1) % 128];
  uint4 w = make_uint4(0, 0, 0, 0);
  global_load16(w, src + min(r + rows / 2, rows - 1), in_range && r + rows / 2 < rows);
  v.x ^= w.x;
  v.y ^= w.y;
  v.z ^= w.z;
  v.w ^= w.w;
  global_store16(v, dst + r, in_range);
  if (in_range)
    tail_out[r] = tail_stage[threadIdx.x];
}

// Hashing kernels (ccminer, sgminer ports): rotates with shf and prmt
// written with tabs and blanks, a scope with several temporaries and a
// parameterised register range, nested scopes and @!p guards.
__device__ __forceinline__ uint32_t rotr(uint32_t x, uint32_t n) {
  uint32_t r;
  asm("shf.r.wrap\t.b32\t%0, %1, %1, %2;" : "=r"(r) : "r"(x), "r"(n));
  return r;
}
__device__ __forceinline__ uint32_t bswap(uint32_t x) {
  uint32_t r;
  asm("prmt .b32 %0, %1, 0, 0x0123;" : "=r"(r) : "r"(x));
  return r;
}
__device__ __forceinline__ uint32_t xor3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t r;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ uint32_t maj_or_ch(uint32_t a, uint32_t b, uint32_t c, uint32_t sel) {
  uint32_t r;
  asm("{\n\t"
      ".reg .b32 t1, t2;\n\t"
      ".reg .b32 u<4>;\n\t"
      ".reg .pred p;\n\t"
      "setp.eq.u32 p, %4, 0;\n\t"
      "and.b32 t1, %1, %2;\n\t"
      "@p  xor.b32  t2, %2, %3;\n\t"
      "@!p or .b32  t2, %2, %3;\n\t"
      "{\n\t"
      "  .reg .b32 t1;\n\t"
      "  and.b32 t1, t2, %1;\n\t"
      "  mov.b32 u0, t1;\n\t"
      "}\n\t"
      "or.b32 %0, t1, u0;\n\t"
      "}"
      : "=r"(r)
      : "r"(a), "r"(b), "r"(c), "r"(sel));
  return r;
}
// 64 x 64 -> 128-bit product with carry chains.
__device__ __forceinline__ void mul_wide_64(uint64_t a, uint64_t b, uint64_t &lo, uint64_t &hi) {
  uint32_t a0 = (uint32_t)a, a1 = (uint32_t)(a >> 32), b0 = (uint32_t)b, b1 = (uint32_t)(b >> 32);
  uint32_t r0, r1, r2, r3;
  asm("mul.lo.u32 %0, %4, %6;\n\t"
      "mul.hi.u32 %1, %4, %6;\n\t"
      "mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
      "madc.hi.u32 %2, %4, %7, 0;\n\t"
      "mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
      "madc.hi.cc.u32 %2, %5, %6, %2;\n\t"
      "addc.u32 %3, 0, 0;\n\t"
      "mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
      "madc.hi.u32 %3, %5, %7, %3;"
      : "=&r"(r0), "=&r"(r1), "=&r"(r2), "=&r"(r3)
      : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  asm("mov.b64 %0, {%1,%2};" : "=l"(lo) : "r"(r0), "r"(r1));
  asm("mov .b64\t%0, {%1, %2} ;" : "=l"(hi) : "r"(r2), "r"(r3));
}

__global__ void hash_mix(const uint32_t *__restrict__ in, uint32_t *__restrict__ out,
                         uint64_t *__restrict__ wide, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uint32_t a = in[4 * i], b = in[4 * i + 1], c = in[4 * i + 2], d = in[4 * i + 3];
#pragma unroll 4
  for (int round = 0; round < 16; ++round) {
    a += xor3(rotr(b, 7), rotr(c, 18), d >> 3);
    d = bswap(d ^ a);
    c = maj_or_ch(a, b, c, round & 1);
    b = rotr(b + d, 11);
  }
  out[4 * i] = a;
  out[4 * i + 1] = b;
  out[4 * i + 2] = c;
  out[4 * i + 3] = d;
  uint64_t lo, hi;
  mul_wide_64((uint64_t)a << 32 | b, (uint64_t)c << 32 | d, lo, hi);
  wide[2 * i] = lo;
  wide[2 * i + 1] = hi;
}
