// Hopper warpgroup GEMM (sm_90a): fp16 inputs, fp32 accumulation, with
// wgmma.mma_async reading both operands from shared memory through 64-bit
// matrix descriptors. Deliberately simple: one warpgroup per 64 x 128 tile of
// C, a 2-stage cp.async double buffer, and one wgmma group in flight. Part of
// the project's own benchmark kernel suite.
//
// Computes C = A * B where
//   A  M x K, fp16, row-major           (A[m][k] at A[m * K + k])
//   B  K x N, fp16, column-major        (B[k][n] at B[n * K + k], i.e. B^T
//                                        stored row-major as N x K)
//   C  M x N, fp32, row-major           (C[m][n] at C[m * N + n])
// M must be a multiple of 64, N of 128 and K of 64; there is no bounds
// checking. Both operands are "K-major" in wgmma terms (no transpose).
//
// Shared-memory layout (no swizzle, the canonical K-major "interleave"
// layout): a tile of R rows x 64 k-values is cut into core matrices of
// 8 rows x 8 halves (8 x 16 bytes, rows 16 bytes apart, 128 contiguous
// bytes). Core matrix (row group g = row / 8, k chunk c = k / 8) starts at
//   byte g * 1024 + c * 128
// so the 8 k chunks of a row group are adjacent (128 bytes apart) and row
// groups are 1024 bytes apart. The descriptor of the k16 step s therefore has
//   start address  = tile base + s * 256        (bits  0-13, >> 4)
//   leading offset = 128  (next core matrix along K)    (bits 16-29, >> 4)
//   stride offset  = 1024 (next 8-row group along M/N)  (bits 32-45, >> 4)
//   base offset 0 (bits 49-51), swizzle mode 0 = none (bits 62-63).
//
// Parameters:
//   A  const __half*  M x K row-major
//   B  const __half*  K x N column-major
//   C  float*         M x N row-major
//   M, N, K  int
//
// Launch shape: 1-D blocks of 128 threads (one warpgroup), grid
// (N / 128, M / 64), no dynamic shared memory (48 KB static: 2 stages of
// 8 KB of A + 16 KB of B).
//
// Problem size that fills an H100: M = N = K = 8192 (8192 blocks,
// 1.1 TFLOP).

#include <cuda_fp16.h>

#define BM 64
#define BN 128
#define BK 64
#define THREADS 128

// Byte offset of the 16-byte chunk (row, chunk) in the core-matrix layout
// described above.
__device__ __forceinline__ unsigned int coreMatrixOffset(int row, int chunk) {
  return (row >> 3) * 1024 + chunk * 128 + (row & 7) * 16;
}

// Shared-memory matrix descriptor, no swizzle.
__device__ __forceinline__ unsigned long long
makeDescriptor(unsigned int smem_addr, unsigned int leading_bytes,
               unsigned int stride_bytes) {
  unsigned long long desc = 0;
  desc |= (unsigned long long)((smem_addr & 0x3FFFF) >> 4);
  desc |= (unsigned long long)((leading_bytes & 0x3FFFF) >> 4) << 16;
  desc |= (unsigned long long)((stride_bytes & 0x3FFFF) >> 4) << 32;
  // Base offset (bits 49-51) and swizzle mode (bits 62-63) stay 0.
  return desc;
}

__device__ __forceinline__ void cpAsync16(unsigned int smem_addr,
                                          const void *gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr),
               "l"(gmem)
               : "memory");
}

__device__ __forceinline__ void cpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator accesses across the wgmma
// fence / wait instructions (the registers are owned by the async unit while
// a group is in flight).
__device__ __forceinline__ void fenceAccumulators(float d[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

// D (64 x 128, fp32, in registers) = A * B + (scale_d ? D : 0).
__device__ __forceinline__ void wgmma64x128x16(float d[64],
                                               unsigned long long desc_a,
                                               unsigned long long desc_b,
                                               int scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63"
      "}, "
      "%64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]),
        "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
        "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]),
        "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
        "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// Issues the cp.async copies of K-slice `kt` into the stage at sa / sb.
// A tile: 64 rows x 8 chunks, B tile: 128 rows x 8 chunks; consecutive
// threads take consecutive chunks of a row so global reads are coalesced.
__device__ __forceinline__ void loadSlice(unsigned int sa, unsigned int sb,
                                          const __half *A, const __half *B,
                                          int K, int block_row, int block_col,
                                          int kt, int tid) {
#pragma unroll
  for (int i = 0; i < (BM * BK / 8) / THREADS; ++i) {
    const int id = tid + i * THREADS;
    const int row = id >> 3;
    const int chunk = id & 7;
    cpAsync16(sa + coreMatrixOffset(row, chunk),
              A + (long long)(block_row + row) * K + kt * BK + chunk * 8);
  }
#pragma unroll
  for (int i = 0; i < (BN * BK / 8) / THREADS; ++i) {
    const int id = tid + i * THREADS;
    const int row = id >> 3;
    const int chunk = id & 7;
    cpAsync16(sb + coreMatrixOffset(row, chunk),
              B + (long long)(block_col + row) * K + kt * BK + chunk * 8);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_wgmma_f16(const __half *__restrict__ A, const __half *__restrict__ B,
                   float *__restrict__ C, int M, int N, int K) {
  __shared__ __align__(1024) __half s_a[2][BM * BK];
  __shared__ __align__(1024) __half s_b[2][BN * BK];

  const int tid = threadIdx.x;
  const int block_row = blockIdx.y * BM;
  const int block_col = blockIdx.x * BN;
  const int num_slices = K / BK;

  const unsigned int sa0 = (unsigned int)__cvta_generic_to_shared(&s_a[0][0]);
  const unsigned int sb0 = (unsigned int)__cvta_generic_to_shared(&s_b[0][0]);
  constexpr unsigned int kStageBytesA = BM * BK * 2;
  constexpr unsigned int kStageBytesB = BN * BK * 2;

  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i)
    d[i] = 0.0f;

  loadSlice(sa0, sb0, A, B, K, block_row, block_col, 0, tid);
  cpAsyncCommit();

  for (int kt = 0; kt < num_slices; ++kt) {
    // Prefetch the next slice into the other stage; the barrier at the end
    // of the previous iteration guarantees nobody still reads it.
    if (kt + 1 < num_slices) {
      const int ns = (kt + 1) & 1;
      loadSlice(sa0 + ns * kStageBytesA, sb0 + ns * kStageBytesB, A, B, K,
                block_row, block_col, kt + 1, tid);
    }
    cpAsyncCommit();
    cpAsyncWait<1>();
    // cp.async writes are generic-proxy writes; wgmma reads shared memory
    // through the async proxy, so each writer fences before the barrier.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();

    const int cs = kt & 1;
    const unsigned int sa = sa0 + cs * kStageBytesA;
    const unsigned int sb = sb0 + cs * kStageBytesB;

    fenceAccumulators(d);
    wgmmaFence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      // Each k16 step is two core matrices (256 bytes) further along K.
      const unsigned long long desc_a =
          makeDescriptor(sa + ks * 256, 128, 1024);
      const unsigned long long desc_b =
          makeDescriptor(sb + ks * 256, 128, 1024);
      // The very first step overwrites D instead of accumulating.
      wgmma64x128x16(d, desc_a, desc_b, (kt > 0 || ks > 0) ? 1 : 0);
    }
    wgmmaCommit();
    wgmmaWait<0>();
    fenceAccumulators(d);
    // The stage just read is refilled by the next iteration's prefetch.
    __syncthreads();
  }

  // Accumulator layout of m64nNk16 (f32): warp w of the warpgroup owns rows
  // 16w..16w+15; for the n8 column block j, d[4j + 0/1] sit at row
  // 16w + lane / 4, columns 8j + 2 * (lane % 4) + 0/1, and d[4j + 2/3] eight
  // rows below.
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int row = block_row + warp * 16 + (lane >> 2);
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = block_col + j * 8 + (lane & 3) * 2;
    *reinterpret_cast<float2 *>(&C[(long long)row * N + col]) =
        make_float2(d[4 * j], d[4 * j + 1]);
    *reinterpret_cast<float2 *>(&C[(long long)(row + 8) * N + col]) =
        make_float2(d[4 * j + 2], d[4 * j + 3]);
  }
}
