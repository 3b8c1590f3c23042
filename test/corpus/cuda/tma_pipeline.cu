// Hopper TMA pipelines as public sm_90a code writes them (CUTLASS/CuTe,
// ThunderKittens, FlashAttention-3, the CUDA programming guide), built with
// -O3 -lineinfo.
//
// Exercises:
//  - cp.async.bulk.tensor loads (2d/3d, shared::cluster <- global, with and
//    without .L2::cache_hint) and stores (global <- shared::cta, bulk_group)
//    from a `const __grid_constant__ CUtensorMap` kernel parameter, through
//    cuda::ptx::, cuda::device::experimental:: (cuda/barrier) and raw asm;
//    cp.async.bulk (non-tensor) through cuda::device::memcpy_async_tx;
//    prefetch.tensormap, createpolicy, fence.proxy.async,
//    cp.async.bulk.commit_group / wait_group.read;
//  - mbarrier init / arrive / arrive.expect_tx / try_wait.parity loops, both
//    the cuda::ptx wrappers (whose asm carries `// 7a.` comments) and the
//    CUTLASS loop with labels inside an asm `{ }` scope (LAB_WAIT/DONE,
//    duplicated in every inlined copy), cuda::barrier with arrive_tx;
//  - setmaxnreg.inc/dec in a warp-specialised producer/consumer kernel;
//  - elect.sync (CUTLASS form, with %%rx|%%px scope registers);
//  - griddepcontrol.wait / launch_dependents (raw asm and the
//    cudaGridDependencySynchronize / cudaTriggerProgrammaticLaunchCompletion
//    intrinsics).
#include <cuda.h> // CUtensorMap
#include <cuda/barrier>
#include <cuda/ptx>
#include <cstdint>

namespace ptx = cuda::ptx;
namespace cde = cuda::device::experimental;

constexpr int kStages = 4;
constexpr int kTileRows = 64;
constexpr int kTileCols = 64;

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// CUTLASS ClusterBarrier::wait.
__device__ __forceinline__ void wait_parity(uint64_t *bar, uint32_t phase) {
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

// CUTLASS elect_one_sync.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred = 0;
  uint32_t laneid = 0;
  asm volatile("{\n"
               ".reg .b32 %%rx;\n"
               ".reg .pred %%px;\n"
               "     elect.sync %%rx|%%px, %2;\n"
               "@%%px mov.s32 %1, 1;\n"
               "    mov.s32 %0, %%rx;\n"
               "}\n"
               : "+r"(laneid), "+r"(pred)
               : "r"(0xFFFFFFFF));
  return pred != 0;
}

template <int kRegs> __device__ __forceinline__ void warpgroup_reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" : : "n"(kRegs));
}
template <int kRegs> __device__ __forceinline__ void warpgroup_reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" : : "n"(kRegs));
}

// Warp-specialised row sums of a [rows x k] fp32 matrix: warpgroup 0 is the
// producer (one elected thread issues TMA loads into a kStages ring), the
// other kConsumers warpgroups wait on the full barriers, reduce, and release
// the stage on the empty barriers.
template <int kConsumers>
__global__ void __launch_bounds__(128 * (1 + kConsumers), 1)
    ws_tile_rowsum(const __grid_constant__ CUtensorMap in_map, float *__restrict__ row_sums,
                   int k_tiles) {
  __shared__ alignas(128) float tiles[kStages][kTileRows][kTileCols];
  __shared__ uint64_t full[kStages];
  __shared__ uint64_t empty[kStages];

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&in_map) : "memory");
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], kConsumers * 4);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  asm volatile("griddepcontrol.wait;" ::: "memory");

  if (warpgroup == 0) {
    warpgroup_reg_dealloc<40>();
    if (threadIdx.x / 32 == 0 && elect_one()) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        const uint32_t phase = (kt / kStages) & 1;
        if (kt >= kStages)
          wait_parity(&empty[s], phase ^ 1);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s],
                                       sizeof(tiles[s]));
        const int32_t coords[2] = {kt * kTileCols, static_cast<int32_t>(blockIdx.x) * kTileRows};
        ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &tiles[s][0][0], &in_map,
                                  coords, &full[s]);
      }
    }
  } else {
    warpgroup_reg_alloc<232>();
    const int ct = threadIdx.x - 128;
    const int row = ct % kTileRows;
    const int part = ct / kTileRows; // 0 .. 2*kConsumers-1
    constexpr int kParts = 2 * kConsumers;
    float acc = 0.0f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % kStages;
      const uint32_t phase = (kt / kStages) & 1;
      while (!ptx::mbarrier_try_wait_parity(&full[s], phase)) {
      }
#pragma unroll
      for (int c = part; c < kTileCols; c += kParts)
        acc += tiles[s][row][(c + row) % kTileCols];
      __syncwarp();
      if (threadIdx.x % 32 == 0)
        (void)ptx::mbarrier_arrive(&empty[s]);
    }
    atomicAdd(&row_sums[blockIdx.x * kTileRows + row], acc);
  }
  asm volatile("griddepcontrol.launch_dependents;" :::);
}

template __global__ void ws_tile_rowsum<1>(const __grid_constant__ CUtensorMap, float *, int);
template __global__ void ws_tile_rowsum<2>(const __grid_constant__ CUtensorMap, float *, int);

// Scales a 2-D tile in place through shared memory: raw-asm TMA load with an
// L2 eviction policy (CuTe SM90_TMA_LOAD_2D), TMA store (SM90_TMA_STORE_2D),
// bulk-group commit and wait; programmatic dependent launch through the
// runtime intrinsics.
__global__ void __launch_bounds__(128)
    tma_scale_tile(const __grid_constant__ CUtensorMap src_map,
                   const __grid_constant__ CUtensorMap dst_map, float scale) {
  __shared__ alignas(128) float tile[kTileRows][kTileCols];
  __shared__ uint64_t bar;
  const uint32_t tile_addr = smem_u32(tile);
  const uint32_t bar_addr = smem_u32(&bar);
  const int c0 = blockIdx.x * kTileCols;
  const int c1 = blockIdx.y * kTileRows;

  cudaGridDependencySynchronize();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar_addr), "r"(1));
    asm volatile("fence.mbarrier_init.release.cluster; \n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar_addr),
                 "r"(static_cast<uint32_t>(sizeof(tile))));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint"
                 " [%0], [%1, {%3, %4}], [%2], %5;"
                 :
                 : "r"(tile_addr), "l"(&src_map), "r"(bar_addr), "r"(c0), "r"(c1), "l"(policy)
                 : "memory");
  }
  wait_parity(&bar, 0);
  for (int i = threadIdx.x; i < kTileRows * kTileCols; i += blockDim.x)
    tile[i / kTileCols][i % kTileCols] *= scale;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 :
                 : "l"(&dst_map), "r"(tile_addr), "r"(c0), "r"(c1)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read %0;" : : "n"(0) : "memory");
  }
  cudaTriggerProgrammaticLaunchCompletion();
}

// The CUDA programming guide's TMA examples: cuda::barrier with
// barrier_arrive_tx, a 3-D tensor load through cuda::device::experimental,
// and a 1-D bulk copy through cuda::device::memcpy_async_tx.
__global__ void barrier_tx_copy(const __grid_constant__ CUtensorMap vol_map, const float4 *src,
                                float *out, int n4) {
  using barrier = cuda::barrier<cuda::thread_scope_block>;
  __shared__ alignas(128) float box[4][16][32];
  __shared__ alignas(16) float4 line[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();

  barrier::arrival_token token;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_3d_global_to_shared(&box, &vol_map, 0, 16 * blockIdx.x, 4 * blockIdx.y,
                                                  bar);
    cuda::device::memcpy_async_tx(line, src + 256 * blockIdx.x, cuda::aligned_size_t<16>(sizeof(line)),
                                  bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(box) + sizeof(line));
  } else {
    token = bar.arrive();
  }
  bar.wait(cuda::std::move(token));

  float s = 0.0f;
  for (int i = threadIdx.x; i < 4 * 16 * 32; i += blockDim.x)
    s += (&box[0][0][0])[i];
  const int j = threadIdx.x % 256;
  if (256 * blockIdx.x + j < n4) {
    float4 v = line[j];
    s += v.x + v.y + v.z + v.w;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
