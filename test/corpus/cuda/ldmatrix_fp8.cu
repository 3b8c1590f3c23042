// Tensor-core data movement and fp8 on sm_90a, as FP8 GEMM / attention code
// (CUTLASS, FlashAttention-3, TransformerEngine) writes it, built with
// -O3 -lineinfo.
//
// Exercises: ldmatrix.sync.aligned .x1/.x2/.x4 (and .trans) and
// stmatrix.sync.aligned .x1/.x2/.x4 (and .trans) in CuTe's
// SM75_U32x4_LDSM_N / SM90_U32x4_STSM_N style; fp8 conversions through
// cuda_fp8.h (__nv_fp8_e4m3, __nv_fp8_e5m2, __nv_fp8x2/x4 types,
// __nv_cvt_float2_to_fp8x2, __nv_cvt_fp8x2_to_halfraw2) that become
// cvt.rn.satfinite.e4m3x2.f32 / e5m2x2.f16x2 / cvt.rn.f16x2.e4m3x2 inside
// `{ }` asm scopes; raw cvt to e4m3x2 from bf16 pairs via f32; and an fp8
// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 inner loop.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cstdint>

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t &d0, uint32_t &d1, uint32_t &d2,
                                        uint32_t &d3) {
  asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2_trans(uint32_t addr, uint32_t &d0, uint32_t &d1) {
  asm volatile("ldmatrix.sync.aligned.x2.trans.m8n8.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(d0), "=r"(d1)
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x1(uint32_t addr, uint32_t &d0) {
  asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];\n" : "=r"(d0) : "r"(addr));
}
__device__ __forceinline__ void stsm_x4(uint32_t addr, uint32_t s0, uint32_t s1, uint32_t s2,
                                        uint32_t s3) {
  asm volatile("stmatrix.sync.aligned.x4.m8n8.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
               "r"(s0), "r"(s1), "r"(s2), "r"(s3));
}
__device__ __forceinline__ void stsm_x2_trans(uint32_t addr, uint32_t s0, uint32_t s1) {
  asm volatile("stmatrix.sync.aligned.x2.trans.m8n8.shared.b16 [%0], {%1, %2};\n" ::"r"(addr),
               "r"(s0), "r"(s1));
}
__device__ __forceinline__ void stsm_x1(uint32_t addr, uint32_t s0) {
  asm volatile("stmatrix.sync.aligned.x1.m8n8.shared.b16 [%0], {%1};\n" ::"r"(addr), "r"(s0));
}

// Two float accumulators -> one packed bf16x2 register.
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

// One warp computes a 16x8 fp32 tile of A(16xK, e4m3, row-major) *
// B(Kx8, e4m3, column-major) with m16n8k32 fp8 MMAs, then writes it as bf16
// through stmatrix.
template <int K>
__global__ void __launch_bounds__(32)
    fp8_mma_tile(const __nv_fp8_e4m3 *__restrict__ a, const __nv_fp8_e4m3 *__restrict__ b,
                 __nv_bfloat16 *__restrict__ c, float scale) {
  __shared__ alignas(128) uint8_t sa[16][K];
  __shared__ alignas(128) uint8_t sb[8][K];
  __shared__ alignas(128) __nv_bfloat16 sc[16][8];
  const int lane = threadIdx.x;
  const int tile = blockIdx.x;
  for (int i = lane * 16; i < 16 * K; i += 32 * 16)
    *reinterpret_cast<uint4 *>(&sa[0][0] + i) =
        *reinterpret_cast<const uint4 *>(reinterpret_cast<const uint8_t *>(a) + tile * 16 * K + i);
  for (int i = lane * 16; i < 8 * K; i += 32 * 16)
    *reinterpret_cast<uint4 *>(&sb[0][0] + i) =
        *reinterpret_cast<const uint4 *>(reinterpret_cast<const uint8_t *>(b) + i);
  __syncwarp();

  float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 32) {
    uint32_t a0, a1, a2, a3, b0, b1;
    // x4: lanes 0-15 address rows 0-15 at k0, lanes 16-31 the same rows at k0+16.
    ldsm_x4(smem_u32(&sa[lane % 16][k0 + (lane / 16) * 16]), a0, a1, a2, a3);
    // x1: lanes 0-7 address the 8 columns of B (k0..k0+15, then k0+16..k0+31).
    ldsm_x1(smem_u32(&sb[lane % 8][k0]), b0);
    ldsm_x1(smem_u32(&sb[lane % 8][k0 + 16]), b1);
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  const uint32_t lo = pack_bf16(d[0] * scale, d[1] * scale);
  const uint32_t hi = pack_bf16(d[2] * scale, d[3] * scale);
  // x2: lanes 0-7 give the rows of the upper 8x8 block, lanes 8-15 the lower.
  stsm_x2_trans(smem_u32(&sc[lane % 16][0]), lo, hi);
  __syncwarp();
  uint32_t t0, t1;
  ldsm_x2_trans(smem_u32(&sc[lane % 16][0]), t0, t1);
  stsm_x4(smem_u32(&sc[lane % 16][0]), t0, t1, lo, hi);
  stsm_x1(smem_u32(&sc[lane % 8][0]), t0 ^ t1);
  __syncwarp();
  for (int i = lane; i < 16 * 8; i += 32)
    c[tile * 128 + i] = (&sc[0][0])[i];
}

template __global__ void fp8_mma_tile<64>(const __nv_fp8_e4m3 *, const __nv_fp8_e4m3 *,
                                          __nv_bfloat16 *, float);
template __global__ void fp8_mma_tile<128>(const __nv_fp8_e4m3 *, const __nv_fp8_e4m3 *,
                                           __nv_bfloat16 *, float);

// Per-tensor scaled quantisation (TransformerEngine style): amax, then
// float -> e4m3 (forward) and e5m2 (gradients) with saturation, packed x2/x4.
__global__ void fp8_quantize(const float4 *__restrict__ x, const __half2 *__restrict__ g,
                             __nv_fp8x4_e4m3 *__restrict__ xq, __nv_fp8x2_storage_t *__restrict__ gq,
                             unsigned *__restrict__ amax_bits, float scale, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4)
    return;
  float4 v = x[i];
  float m = fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w)));
  atomicMax(amax_bits, __float_as_uint(m));
  xq[i] = __nv_fp8x4_e4m3(make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale));
  __half2_raw h = static_cast<__half2_raw>(g[i]);
  gq[2 * i] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E5M2);
  gq[2 * i + 1] = __nv_cvt_float2_to_fp8x2(make_float2(v.x, v.w), __NV_NOSAT, __NV_E5M2);
}

// Dequantisation back to half/float, and a raw-asm e4m3x2 pack of two bf16
// values through f32 (as FP8 attention kernels write P before the PV GEMM).
__global__ void fp8_dequantize(const __nv_fp8x2_storage_t *__restrict__ q, const __nv_fp8_e5m2 *e5,
                               const __nv_bfloat162 *__restrict__ p, __half2 *__restrict__ out,
                               float *__restrict__ out_f, uint16_t *__restrict__ repacked,
                               float inv_scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(q[i], __NV_E4M3);
  out[i] = __hmul2(__half2(h), __float2half2_rn(inv_scale));
  out_f[i] = static_cast<float>(e5[i]) * inv_scale + static_cast<float>(__nv_fp8_e4m3(out_f[i]));
  float2 f = __bfloat1622float2(p[i]);
  uint16_t packed;
  asm("{\n"
      "cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;\n"
      "}\n"
      : "=h"(packed)
      : "f"(f.x), "f"(f.y));
  repacked[i] = packed;
}
