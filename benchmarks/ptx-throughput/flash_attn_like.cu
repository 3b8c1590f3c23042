// A template-heavy flash-attention forward pass in the style of
// FlashAttention-2's hand-written CUDA (not a copy of it), for the PTX
// import/export speed benchmark: make-large-ptx.sh compiles it with
// -O3 -lineinfo into one large PTX file. Nothing runs it.
//
// Each CTA handles kBlockM query rows (16 per warp) and walks the key/value
// sequence in kBlockN blocks: cp.async copies K and V tiles into shared
// memory, ldmatrix loads the mma fragments, S = Q K^T and O += P V use
// mma.sync.aligned.m16n8k16 (f16 or bf16 inputs, f32 accumulators), and an
// online softmax (running row maximum and sum, exp2f, quad shuffles) keeps
// O normalised. Template parameters: element type, head dimension, tile
// sizes, causal masking, even key length, and whether the log-sum-exp is
// written. Every loop over fragments is unrolled, as in the original, so
// each instantiation is large and they differ.
//
// FA_CONFIGS selects how many instantiations are compiled (1: a few, for a
// quick check; 2: the full set, default).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

#ifndef FA_CONFIGS
#define FA_CONFIGS 2
#endif

namespace fa {

struct Params {
  const void *q, *k, *v;
  void *o;
  float *lse;
  int seqlen_q, seqlen_k;
  int q_row_stride, k_row_stride, v_row_stride, o_row_stride;
  int q_head_stride, k_head_stride, v_head_stride, o_head_stride;
  int q_batch_stride, k_batch_stride, v_batch_stride, o_batch_stride;
  int heads, heads_k;
  float scale_log2; // softmax scale * log2(e)
};

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <typename T> struct MmaOp;
template <> struct MmaOp<__half> {
  __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
};
template <> struct MmaOp<__nv_bfloat16> {
  __device__ __forceinline__ static void run(float (&d)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
  }
};

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2(uint32_t addr, uint32_t (&r)[2]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm_x2_trans(uint32_t addr, uint32_t (&r)[2]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr));
}

// Row-wise reductions over the 4 threads of a quad that share an mma row.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Swizzled shared-memory index of 16-byte chunk c of row r (kChunks per row),
// so that ldmatrix rows of 8 chunks hit different banks.
template <int kChunks> __device__ __forceinline__ int swz(int r, int c) {
  return r * kChunks + (c ^ (r & 7 & (kChunks - 1)));
}

template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kCausal, bool kEvenN, bool kWriteLse>
struct Kernel {
  static constexpr int kWarps = kBlockM / 16;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kChunks = kHeadDim * sizeof(T) / 16; // 16-byte chunks per row
  static constexpr int kNTiles = kBlockN / 8;                // n8 tiles of S
  static constexpr int kDTiles = kHeadDim / 8;               // n8 tiles of O
  static constexpr int kKSteps = kHeadDim / 16;              // k16 steps of Q K^T
  static constexpr int kPSteps = kBlockN / 16;               // k16 steps of P V
  using Mma = MmaOp<T>;

  struct Smem {
    uint4 q[kBlockM * kChunks];
    uint4 k[2][kBlockN * kChunks];
    uint4 v[2][kBlockN * kChunks];
  };

  __device__ static void load_tile(uint4 *dst, const T *src, int rows, int row_stride, int valid_rows) {
#pragma unroll
    for (int i = threadIdx.x; i < rows * kChunks; i += kThreads) {
      const int r = i / kChunks, c = i % kChunks;
      const bool ok = kEvenN || r < valid_rows;
      cp_async16(&dst[swz<kChunks>(r, c)],
                 src + static_cast<int64_t>(ok ? r : 0) * row_stride + c * (16 / sizeof(T)), ok);
    }
  }

  __device__ static void run(const Params &p) {
    extern __shared__ uint4 smem_raw[];
    Smem &s = *reinterpret_cast<Smem *>(smem_raw);
    const int m_block = blockIdx.x, head = blockIdx.y, batch = blockIdx.z;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int head_k = head / (p.heads / p.heads_k);
    const T *q = static_cast<const T *>(p.q) + batch * p.q_batch_stride + head * p.q_head_stride +
                 m_block * kBlockM * p.q_row_stride;
    const T *k = static_cast<const T *>(p.k) + batch * p.k_batch_stride + head_k * p.k_head_stride;
    const T *v = static_cast<const T *>(p.v) + batch * p.v_batch_stride + head_k * p.v_head_stride;

    const int n_end = kCausal ? min(p.seqlen_k, (m_block + 1) * kBlockM + p.seqlen_k - p.seqlen_q)
                              : p.seqlen_k;
    const int n_blocks = (n_end + kBlockN - 1) / kBlockN;
    if (n_blocks <= 0)
      return;

    load_tile(s.q, q, kBlockM, p.q_row_stride, p.seqlen_q - m_block * kBlockM);
    load_tile(s.k[0], k, kBlockN, p.k_row_stride, p.seqlen_k);
    load_tile(s.v[0], v, kBlockN, p.v_row_stride, p.seqlen_k);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    // Q fragments stay in registers for the whole row block.
    uint32_t qf[kKSteps][4];
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      const int r = warp * 16 + (lane % 16);
      const int c = ks * 2 + lane / 16;
      ldsm_x4(smem_u32(&s.q[swz<kChunks>(r, c)]), qf[ks]);
    }

    float o[kDTiles][4];
#pragma unroll
    for (int d = 0; d < kDTiles; ++d)
      o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};
    const int row0 = m_block * kBlockM + warp * 16 + lane / 4;

    for (int nb = 0; nb < n_blocks; ++nb) {
      const int buf = nb & 1;
      if (nb + 1 < n_blocks) { // prefetch the next K/V block
        const int next = (nb + 1) * kBlockN;
        load_tile(s.k[buf ^ 1], k + static_cast<int64_t>(next) * p.k_row_stride, kBlockN,
                  p.k_row_stride, p.seqlen_k - next);
        load_tile(s.v[buf ^ 1], v + static_cast<int64_t>(next) * p.v_row_stride, kBlockN,
                  p.v_row_stride, p.seqlen_k - next);
      }
      cp_async_commit();

      // S = Q K^T
      float sacc[kNTiles][4];
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        sacc[nt][0] = sacc[nt][1] = sacc[nt][2] = sacc[nt][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < kKSteps; ++ks) {
          uint32_t kf[2];
          const int r = nt * 8 + (lane % 8);
          const int c = ks * 2 + (lane / 8) % 2;
          ldsm_x2(smem_u32(&s.k[buf][swz<kChunks>(r, c)]), kf);
          Mma::run(sacc[nt], qf[ks], kf);
        }
      }

      // Masking and online softmax.
      const int col_base = nb * kBlockN + 2 * (lane % 4);
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = col_base + nt * 8 + (e & 1);
          const int row = row0 + (e / 2) * 8;
          bool masked = !kEvenN && col >= p.seqlen_k;
          if (kCausal)
            masked = masked || col > row + p.seqlen_k - p.seqlen_q;
          sacc[nt][e] = masked ? -INFINITY : sacc[nt][e];
        }
      }
      float scale_old[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = row_max[h];
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
          mx = fmaxf(mx, fmaxf(sacc[nt][2 * h], sacc[nt][2 * h + 1]));
        mx = quad_max(mx);
        const float mx_scaled = mx == -INFINITY ? 0.0f : mx * p.scale_log2;
        scale_old[h] = exp2f(row_max[h] * p.scale_log2 - mx_scaled);
        row_max[h] = mx;
        float sum = 0.0f;
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) {
          sacc[nt][2 * h] = exp2f(sacc[nt][2 * h] * p.scale_log2 - mx_scaled);
          sacc[nt][2 * h + 1] = exp2f(sacc[nt][2 * h + 1] * p.scale_log2 - mx_scaled);
          sum += sacc[nt][2 * h] + sacc[nt][2 * h + 1];
        }
        row_sum[h] = row_sum[h] * scale_old[h] + sum;
      }
#pragma unroll
      for (int d = 0; d < kDTiles; ++d) {
        o[d][0] *= scale_old[0];
        o[d][1] *= scale_old[0];
        o[d][2] *= scale_old[1];
        o[d][3] *= scale_old[1];
      }

      // O += P V; two n8 accumulator tiles of S form one k16 A fragment.
#pragma unroll
      for (int ps = 0; ps < kPSteps; ++ps) {
        uint32_t pf[4];
        pf[0] = Mma::pack(sacc[2 * ps][0], sacc[2 * ps][1]);
        pf[1] = Mma::pack(sacc[2 * ps][2], sacc[2 * ps][3]);
        pf[2] = Mma::pack(sacc[2 * ps + 1][0], sacc[2 * ps + 1][1]);
        pf[3] = Mma::pack(sacc[2 * ps + 1][2], sacc[2 * ps + 1][3]);
#pragma unroll
        for (int d = 0; d < kDTiles; ++d) {
          uint32_t vf[2];
          const int r = ps * 16 + (lane % 16);
          ldsm_x2_trans(smem_u32(&s.v[buf][swz<kChunks>(r, d)]), vf);
          Mma::run(o[d], pf, vf);
        }
      }
      cp_async_wait<0>();
      __syncthreads();
    }

    // Normalise and store O (and the log-sum-exp).
    T *out = static_cast<T *>(p.o) + batch * p.o_batch_stride + head * p.o_head_stride;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float sum = quad_sum(row_sum[h]);
      const float inv = sum == 0.0f || sum != sum ? 1.0f : 1.0f / sum;
      const int row = row0 + h * 8;
      if (row < p.seqlen_q) {
#pragma unroll
        for (int d = 0; d < kDTiles; ++d) {
          const uint32_t packed = Mma::pack(o[d][2 * h] * inv, o[d][2 * h + 1] * inv);
          *reinterpret_cast<uint32_t *>(out + static_cast<int64_t>(row) * p.o_row_stride + d * 8 +
                                        2 * (lane % 4)) = packed;
        }
        if (kWriteLse && lane % 4 == 0)
          p.lse[(batch * p.heads + head) * p.seqlen_q + row] =
              row_max[h] * p.scale_log2 * 0.6931471805599453f + __logf(sum);
      }
    }
  }
};

// Rows that see no keys keep LSE = -inf. (Also a kernel that is not a
// template: with only template kernels, nvcc names internal-linkage
// functions with a module id that changes from run to run.)
__global__ void flash_fwd_init_lse(float *lse, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    lse[i] = -INFINITY;
}

template <typename T, int kHeadDim, int kBlockM, int kBlockN, bool kCausal, bool kEvenN, bool kWriteLse>
__global__ void __launch_bounds__(kBlockM * 2) flash_fwd_kernel(const __grid_constant__ Params p) {
  Kernel<T, kHeadDim, kBlockM, kBlockN, kCausal, kEvenN, kWriteLse>::run(p);
}

// All causal / even-N / LSE variants of one (type, head dim, tile) choice.
template <typename T, int kHeadDim, int kBlockM, int kBlockN> struct Variants {
  static void *all[8];
};
template <typename T, int D, int M, int N>
void *Variants<T, D, M, N>::all[8] = {
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, false, false, false>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, false, false, true>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, false, true, false>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, false, true, true>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, true, false, false>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, true, false, true>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, true, true, false>),
    reinterpret_cast<void *>(flash_fwd_kernel<T, D, M, N, true, true, true>),
};

// The head-dim / tile table, like FlashAttention-2's per-head-dim launch
// templates.
#define FA_HEADDIM_SET(T)                                                                          \
  template struct Variants<T, 64, 64, 64>;                                                         \
  template struct Variants<T, 64, 128, 64>;                                                        \
  template struct Variants<T, 128, 64, 64>;                                                        \
  template struct Variants<T, 128, 128, 32>;
#define FA_HEADDIM_SET_FULL(T)                                                                     \
  template struct Variants<T, 64, 128, 128>;                                                       \
  template struct Variants<T, 96, 64, 64>;                                                         \
  template struct Variants<T, 96, 128, 64>;                                                        \
  template struct Variants<T, 128, 128, 64>;                                                       \
  template struct Variants<T, 256, 64, 32>;                                                        \
  template struct Variants<T, 256, 64, 64>;

FA_HEADDIM_SET(__half)
#if FA_CONFIGS >= 2
FA_HEADDIM_SET(__nv_bfloat16)
FA_HEADDIM_SET_FULL(__half)
FA_HEADDIM_SET_FULL(__nv_bfloat16)
#endif

} // namespace fa
