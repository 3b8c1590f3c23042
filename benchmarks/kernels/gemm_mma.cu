// Tensor-core GEMM in the style of Tacker's fused kernels: fp16 inputs, fp32
// accumulation, cp.async multi-stage shared-memory pipeline, ldmatrix
// fragment loads and mma.sync.m16n8k16, all through inline PTX. Part of the
// project's own benchmark kernel suite.
//
// Computes C = A * B where
//   A  M x K, fp16, row-major           (A[m][k] at A[m * K + k])
//   B  K x N, fp16, column-major        (B[k][n] at B[n * K + k], i.e. B^T
//                                        stored row-major as N x K)
//   C  M x N, fp32, row-major           (C[m][n] at C[m * N + n])
// with every product accumulated in fp32. M and N must be multiples of 128
// and K a multiple of 32; there is no bounds checking.
//
// Tiling: a 256-thread block (8 warps as 2 x 4) computes a 128 x 128 tile of
// C; each warp owns a 64 x 32 sub-tile (4 x 4 mma tiles of 16 x 8). K is
// walked in 32-wide slices through a 3-stage cp.async ring in shared memory
// (3 x (8 KB of A + 8 KB of B) = 48 KB, static). Each 64-byte smem row of a
// slice holds four 16-byte chunks whose order is XOR-swizzled with
// (row / 2) % 4 so that ldmatrix reads are bank-conflict free.
//
// Parameters:
//   A  const __half*  M x K row-major
//   B  const __half*  K x N column-major
//   C  float*         M x N row-major
//   M, N, K  int
//
// Launch shape: 1-D blocks of 256 threads, grid (N / 128, M / 128), no
// dynamic shared memory (48 KB static).
//
// Problem size that fills an H100: M = N = K = 8192 (4096 blocks, 1.1 TFLOP).

#include <cuda_fp16.h>

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256

// Offset in halves of 16-byte chunk `chunk` (0..3) of row `row` in a
// BK-wide smem tile, with the bank-conflict-avoiding XOR swizzle.
__device__ __forceinline__ int swizzledOffset(int row, int chunk) {
  return row * BK + ((chunk ^ ((row >> 1) & 3)) << 3);
}

__device__ __forceinline__ void cpAsync16(unsigned int smem_addr,
                                          const void *gmem) {
  // .cg: bypass L1, the tile is used once per block from shared memory.
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

__device__ __forceinline__ void ldmatrixX4(unsigned int &r0, unsigned int &r1,
                                           unsigned int &r2, unsigned int &r3,
                                           unsigned int smem_addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(smem_addr));
}

__device__ __forceinline__ void mma16816(float d[4], const unsigned int a[4],
                                         const unsigned int b[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]));
}

// Issues the cp.async copies of K-slice `kt` of the block's A and B tiles
// into stage buffers sa / sb (shared addresses). Each thread copies two
// 16-byte chunks of A and two of B.
__device__ __forceinline__ void loadSlice(unsigned int sa, unsigned int sb,
                                          const __half *A, const __half *B,
                                          int K, int block_row, int block_col,
                                          int kt, int tid) {
#pragma unroll
  for (int i = 0; i < (BM * BK / 8) / THREADS; ++i) {
    const int id = tid + i * THREADS;
    const int row = id >> 2;
    const int chunk = id & 3;
    const __half *ga =
        A + (long long)(block_row + row) * K + kt * BK + chunk * 8;
    cpAsync16(sa + swizzledOffset(row, chunk) * 2, ga);
  }
#pragma unroll
  for (int i = 0; i < (BN * BK / 8) / THREADS; ++i) {
    const int id = tid + i * THREADS;
    const int row = id >> 2;
    const int chunk = id & 3;
    const __half *gb =
        B + (long long)(block_col + row) * K + kt * BK + chunk * 8;
    cpAsync16(sb + swizzledOffset(row, chunk) * 2, gb);
  }
}

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_mma_f16(const __half *__restrict__ A, const __half *__restrict__ B,
                 float *__restrict__ C, int M, int N, int K) {
  __shared__ __align__(128) __half s_a[STAGES][BM * BK];
  __shared__ __align__(128) __half s_b[STAGES][BN * BK];

  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp >> 2; // 0..1: 64-row half of the tile
  const int warp_n = warp & 3;  // 0..3: 32-column quarter of the tile
  const int block_row = blockIdx.y * BM;
  const int block_col = blockIdx.x * BN;
  const int num_slices = K / BK;

  const unsigned int sa0 = (unsigned int)__cvta_generic_to_shared(&s_a[0][0]);
  const unsigned int sb0 = (unsigned int)__cvta_generic_to_shared(&s_b[0][0]);
  constexpr unsigned int kStageBytesA = BM * BK * 2;
  constexpr unsigned int kStageBytesB = BN * BK * 2;

  float acc[4][4][4];
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[mi][ni][e] = 0.0f;
    }
  }

  // Prologue: fill STAGES - 1 stages. Empty groups are still committed so
  // that the wait_group count below stays uniform.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < num_slices)
      loadSlice(sa0 + s * kStageBytesA, sb0 + s * kStageBytesB, A, B, K,
                block_row, block_col, s, tid);
    cpAsyncCommit();
  }

  for (int kt = 0; kt < num_slices; ++kt) {
    // Slice kt has landed once at most STAGES - 2 newer groups are pending;
    // the barrier publishes every thread's copies and also guarantees that
    // all warps are done with the stage refilled just below.
    cpAsyncWait<STAGES - 2>();
    __syncthreads();

    const int next = kt + STAGES - 1;
    if (next < num_slices) {
      const int ns = next % STAGES;
      loadSlice(sa0 + ns * kStageBytesA, sb0 + ns * kStageBytesB, A, B, K,
                block_row, block_col, next, tid);
    }
    cpAsyncCommit();

    const int cs = kt % STAGES;
    const unsigned int sa = sa0 + cs * kStageBytesA;
    const unsigned int sb = sb0 + cs * kStageBytesB;

#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      unsigned int a_frag[4][4];
      unsigned int b_frag[4][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        // Lanes 0-15 address rows 0-15 at k 0-7, lanes 16-31 rows 0-15 at
        // k 8-15: the four 8x8 matrices come back in a0..a3 order.
        const int row = warp_m * 64 + mi * 16 + (lane & 15);
        const int chunk = ks * 2 + (lane >> 4);
        ldmatrixX4(a_frag[mi][0], a_frag[mi][1], a_frag[mi][2], a_frag[mi][3],
                   sa + swizzledOffset(row, chunk) * 2);
      }
#pragma unroll
      for (int nj = 0; nj < 2; ++nj) {
        // Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7),
        // (n 8-15, k 8-15) = b0/b1 of two adjacent n8 tiles.
        const int row = warp_n * 32 + nj * 16 + ((lane >> 4) << 3) + (lane & 7);
        const int chunk = ks * 2 + ((lane >> 3) & 1);
        ldmatrixX4(b_frag[2 * nj][0], b_frag[2 * nj][1], b_frag[2 * nj + 1][0],
                   b_frag[2 * nj + 1][1], sb + swizzledOffset(row, chunk) * 2);
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 4; ++ni)
          mma16816(acc[mi][ni], a_frag[mi], b_frag[ni]);
    }
  }
  // Drain the (empty) trailing groups before the block exits.
  cpAsyncWait<0>();

  // Accumulator fragment: c0/c1 at (lane / 4, 2 * (lane % 4) + {0, 1}),
  // c2/c3 eight rows below.
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int row = block_row + warp_m * 64 + mi * 16 + (lane >> 2);
      const int col = block_col + warp_n * 32 + ni * 8 + (lane & 3) * 2;
      *reinterpret_cast<float2 *>(&C[(long long)row * N + col]) =
          make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2 *>(&C[(long long)(row + 8) * N + col]) =
          make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}
