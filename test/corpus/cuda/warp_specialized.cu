// A warp-specialised kernel in the style of FlashAttention-3 (and CUTLASS's
// sm90 warp-specialised ping-pong kernels), built with -O3 -lineinfo.
//
// Exercises:
//  - register reallocation between warpgroups: the producer warpgroup gives
//    registers back (setmaxnreg.dec 40 with one consumer warpgroup, 24 with
//    two, as FA3's LoadRegisterRequirement) and the consumers take them
//    (setmaxnreg.inc 232 / 240, FA3's MmaRegisterRequirement);
//  - a producer warpgroup in which only warp 0, through elect.sync, issues
//    bulk copies (cp.async.bulk global -> shared with mbarrier complete_tx)
//    into a ring of stages; the other producer warps do nothing and exit;
//  - named barriers that only the consumer warps reach, as FA3 and
//    CUTLASS's NamedBarrier write them: the warp-scheduler barriers that
//    make the two consumer warpgroups take turns (bar.sync / bar.arrive with
//    the barrier id and thread count in registers, 256 threads), and an
//    epilogue barrier (bar.sync 1, 256 / 128) before one consumer thread
//    stores the output tile with a bulk copy (cp.async.bulk shared -> global,
//    bulk_group commit / wait_group.read);
//  - full/empty mbarrier pipelines (try_wait.parity loops, arrive,
//    arrive.expect_tx) and an online softmax with row maxima combined by
//    shfl.xor, as an attention forward pass does between its GEMMs.
//
// The kernel: per block, tiles x[blockIdx.x][kt] of kRows x kCols floats
// (kRows = 64 per consumer warpgroup; contiguous, for a 1-D bulk copy);
// out[blockIdx.x][r][c] = sum_kt e^{x - m_r} x / sum_kt e^{x - m_r}, m_r the
// running maximum of row r: a softmax over kt, column by column, rescaled
// per row as flash attention rescales its accumulator.
#include <cstdint>
#include <math_constants.h> // CUDART_INF_F

constexpr int kStages = 2;
constexpr int kCols = 32;
constexpr int kRowsPerWarpgroup = 64;
constexpr int kColsPerThread = kCols / 2; // two threads per row

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cutlass::arch::warpgroup_reg_alloc / warpgroup_reg_dealloc.
template <uint32_t kRegs> __device__ __forceinline__ void warpgroup_reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" : : "n"(kRegs));
}
template <uint32_t kRegs> __device__ __forceinline__ void warpgroup_reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" : : "n"(kRegs));
}

// cutlass::arch::NamedBarrier::sync / arrive (id and count in registers).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" : : "r"(id), "r"(threads) : "memory");
}

// cute::elect_one_sync.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred = 0;
  asm volatile("{\n"
               ".reg .b32 %%rx;\n"
               ".reg .pred %%px;\n"
               "     elect.sync %%rx|%%px, %1;\n"
               "@%%px mov.s32 %0, 1;\n"
               "}\n"
               : "+r"(pred)
               : "r"(0xFFFFFFFF));
  return pred != 0;
}

// cutlass::arch::ClusterBarrier (cta scope).
__device__ __forceinline__ void mbar_init(uint64_t *bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, uint32_t phase) {
  asm volatile("{\n"
               ".reg .pred                P1;\n"
               "LAB_WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
               "@P1                       bra DONE;\n"
               "bra     LAB_WAIT;\n"
               "DONE:\n"
               "}\n" ::"r"(smem_u32(bar)),
               "r"(phase)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

// FA3's FwdNamedBarriers: 0 is __syncthreads, then the epilogue barrier and
// one warp-scheduler barrier per consumer warpgroup.
constexpr uint32_t kEpilogue = 1;
constexpr uint32_t kWarpSchedulerWG1 = 2;

// The kernel body; the kernels below fix the warpgroups and budgets.
template <int kConsumers, uint32_t kProducerRegs, uint32_t kConsumerRegs>
__device__ __forceinline__ void ws_softmax_body(const float *__restrict__ x,
                                                float *__restrict__ out, int k_tiles) {
  constexpr int kRows = kRowsPerWarpgroup * kConsumers;
  constexpr uint32_t kTileBytes = kRows * kCols * sizeof(float);
  constexpr uint32_t kConsumerThreads = 128 * kConsumers;
  __shared__ alignas(128) float tiles[kStages][kRows][kCols];
  __shared__ alignas(8) uint64_t full[kStages];
  __shared__ alignas(8) uint64_t empty[kStages];

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kConsumers * 4); // one arrive per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warpgroup == 0) {
    // Producer: FA3's load warpgroup.
    warpgroup_reg_dealloc<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && elect_one()) {
      const float *src = x + static_cast<size_t>(blockIdx.x) * k_tiles * kRows * kCols;
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages)
          mbar_wait(&empty[s], ((kt / kStages) & 1) ^ 1);
        mbar_arrive_expect_tx(&full[s], kTileBytes);
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                     " [%0], [%1], %2, [%3];" ::"r"(smem_u32(&tiles[s][0][0])),
                     "l"(src + static_cast<size_t>(kt) * kRows * kCols), "r"(kTileBytes),
                     "r"(smem_u32(&full[s]))
                     : "memory");
      }
    }
  } else {
    // Consumers: FA3's MMA warpgroups.
    warpgroup_reg_alloc<kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int t = threadIdx.x % 128;
    const int row = consumer * kRowsPerWarpgroup + t / 2;
    const int col0 = (t % 2) * kColsPerThread;
    float m = -CUDART_INF_F;
    float o[kColsPerThread], l[kColsPerThread];
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j)
      o[j] = l[j] = 0.0f;
    // FA3 mma_init: the second warpgroup lets the first go first.
    if (kConsumers == 2 && consumer == 1)
      named_barrier_arrive(kWarpSchedulerWG1, 2 * 128);
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      mbar_wait(&full[s], (kt / kStages) & 1);
      if (kConsumers == 2) // warp_scheduler_barrier_sync
        named_barrier_sync(kWarpSchedulerWG1 + consumer, 2 * 128);
      float v[kColsPerThread];
      float tile_max = m;
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) {
        v[j] = tiles[s][row][col0 + j];
        tile_max = fmaxf(tile_max, v[j]);
      }
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffff, tile_max, 1));
      const float scale = __expf(m - tile_max);
      m = tile_max;
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) {
        const float p = __expf(v[j] - m);
        o[j] = fmaf(o[j], scale, p * v[j]);
        l[j] = fmaf(l[j], scale, p);
      }
      // warp_scheduler_barrier_arrive: the other warpgroup's turn (its
      // last turn needs no arrive, so that no barrier is left pending).
      if (kConsumers == 2 && (consumer == 0 || kt + 1 < k_tiles))
        named_barrier_arrive(kWarpSchedulerWG1 + (1 - consumer), 2 * 128);
      __syncwarp();
      if (threadIdx.x % 32 == 0)
        mbar_arrive(&empty[s]);
    }
    // Epilogue: every tile has been loaded and read, so stage 0 stages the
    // output (each warpgroup writes only its own rows, which only it read).
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j)
      tiles[0][row][col0 + j] = o[j] / l[j];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync %0, %1;" ::"n"(kEpilogue), "n"(kConsumerThreads) : "memory");
    if (threadIdx.x == 128) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                       out + static_cast<size_t>(blockIdx.x) * kRows * kCols),
                   "r"(smem_u32(&tiles[0][0][0])), "r"(kTileBytes)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
  }
}

// FA3 with two MMA warpgroups (ping-pong): 24 / 240 registers, 384 threads.
__global__ void __launch_bounds__(384, 1)
    ws_softmax_fa3(const float *__restrict__ x, float *__restrict__ out, int k_tiles) {
  ws_softmax_body<2, 24, 240>(x, out, k_tiles);
}

// One consumer warpgroup, as CUTLASS's warp-specialised kernels with one
// math warpgroup: 40 / 232 registers, 256 threads.
__global__ void __launch_bounds__(256, 1)
    ws_softmax_1consumer(const float *__restrict__ x, float *__restrict__ out, int k_tiles) {
  ws_softmax_body<1, 40, 232>(x, out, k_tiles);
}
