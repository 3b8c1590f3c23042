// Thread-block clusters and distributed shared memory on sm_90a, as public
// code reaches them (CUTLASS cluster helpers, cooperative_groups, cuda::ptx),
// built with -O3 -lineinfo.
//
// Exercises: __cluster_dims__ (.reqnctapercluster) and
// __launch_bounds__ with a cluster size (.maxclusterrank);
// barrier.cluster.arrive[.release|.relaxed].aligned / wait[.acquire].aligned;
// cluster special registers (%cluster_ctarank, %cluster_nctarank,
// %cluster_ctaid, %clusterid, %nclusterid, %is_explicit_cluster);
// mapa.shared::cluster, ld/st/red on .shared::cluster addresses, atomics
// through map_shared_rank pointers, cooperative_groups::this_cluster()
// (sync, block_rank), st.async with mbarrier complete_tx to a peer CTA,
// and a multicast TMA load (.multicast::cluster with a CTA mask).
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda/ptx>
#include <cstdint>

namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

constexpr int kCluster = 4;
constexpr int kThreads = 256;

// CUTLASS cute/arch/cluster_sm90.hpp style helpers.
__device__ __forceinline__ uint32_t block_rank_in_cluster() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank) :);
  return rank;
}
__device__ __forceinline__ dim3 cluster_id_in_grid() {
  uint32_t x, y, z;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(x) :);
  asm volatile("mov.u32 %0, %%clusterid.y;\n" : "=r"(y) :);
  asm volatile("mov.u32 %0, %%clusterid.z;\n" : "=r"(z) :);
  return {x, y, z};
}
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" : :);
}
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.aligned;\n" : :);
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;\n" : :);
}
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}
__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t map_to_rank(uint32_t smem_addr, uint32_t rank) {
  uint32_t result;
  asm volatile("mapa.shared::cluster.u32  %0, %1, %2;\n" : "=r"(result) : "r"(smem_addr), "r"(rank));
  return result;
}

// Histogram spread over the cluster: every CTA owns 1/kCluster of the bins
// in its shared memory and the others add into them remotely; each cluster
// writes its own row of `bins` (nclusterid.x rows of nbins).
__global__ void __cluster_dims__(kCluster, 1, 1) __launch_bounds__(kThreads)
    cluster_histogram(const int *__restrict__ in, int *__restrict__ bins, int n, int nbins) {
  extern __shared__ int local_bins[];
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  const int per_cta = (nbins + kCluster - 1) / kCluster;
  for (int i = threadIdx.x; i < per_cta; i += blockDim.x)
    local_bins[i] = 0;
  cluster.sync();

  const int clusters = static_cast<int>(ptx::get_sreg_nclusterid_x());
  const int cid = static_cast<int>(cluster_id_in_grid().x);
  const int per_cluster = (n + clusters - 1) / clusters;
  const int end = min(n, (cid + 1) * per_cluster);
  for (int i = cid * per_cluster + rank * blockDim.x + threadIdx.x; i < end;
       i += blockDim.x * kCluster) {
    int b = min(max(in[i], 0), nbins - 1);
    int *dst = cluster.map_shared_rank(local_bins, b / per_cta);
    atomicAdd(dst + b % per_cta, 1);
  }
  cluster.sync();

  int *out = bins + cid * nbins;
  for (int i = threadIdx.x; i < per_cta; i += blockDim.x)
    if (rank * per_cta + i < nbins)
      atomicAdd(&out[rank * per_cta + i], local_bins[i]);
}

// Ring exchange through distributed shared memory with raw mapa and
// ld/st.shared::cluster, cuda::ptx special registers, and split
// arrive/wait cluster barriers.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads)
    cluster_ring_shift(const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float buf[kThreads];
  const uint32_t rank = block_rank_in_cluster();
  const uint32_t ncta = ptx::get_sreg_cluster_nctarank();
  const uint32_t cta_x = ptx::get_sreg_cluster_ctaid_x();
  const uint32_t explicit_cluster = ptx::get_sreg_is_explicit_cluster();
  const int gid = blockIdx.x * kThreads + threadIdx.x;
  buf[threadIdx.x] = in[gid];
  cluster_arrive_relaxed();
  cluster_wait();

  const uint32_t peer = (rank + 1) % ncta;
  const uint32_t remote = map_to_rank(smem_u32(&buf[threadIdx.x]), peer);
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(remote), "f"(v + 1.0f) : "memory");
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(map_to_rank(smem_u32(&buf[0]), 0)),
               "r"(explicit_cluster)
               : "memory");
  cluster_sync();
  out[gid] = buf[threadIdx.x] + static_cast<float>(cta_x);
}

// Each CTA pushes a tile into its right neighbour with st.async, signalling
// the neighbour's mbarrier; rank 0 multicasts one TMA tile to the whole
// cluster.
__global__ void __launch_bounds__(128, 1, kCluster)
    cluster_push_multicast(const __grid_constant__ CUtensorMap map, const float4 *__restrict__ in,
                           float *__restrict__ out) {
  __shared__ alignas(128) float tile[32][32];
  __shared__ alignas(16) float4 inbox[128];
  __shared__ uint64_t bar;
  const uint32_t rank = block_rank_in_cluster();
  const uint32_t bar_addr = smem_u32(&bar);
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  cluster_sync();
  if (threadIdx.x == 0)
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cluster, ptx::space_shared, &bar,
                                   sizeof(tile) + sizeof(inbox));
  cluster_sync();

  const uint32_t peer = (rank + 1) % kCluster;
  const float4 mine = in[blockIdx.x * 128 + threadIdx.x];
  const uint32_t dst = map_to_rank(smem_u32(&inbox[threadIdx.x]), peer);
  const uint32_t peer_bar = map_to_rank(bar_addr, peer);
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];"
               ::"r"(dst), "f"(mine.x), "f"(mine.y), "f"(mine.z), "f"(mine.w), "r"(peer_bar)
               : "memory");
  if (rank == 0 && threadIdx.x == 0) {
    const uint16_t mask = (1u << kCluster) - 1;
    const int32_t coords[2] = {0, static_cast<int32_t>(blockIdx.x / kCluster) * 32};
    ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &tile[0][0], &map, coords, &bar,
                              mask);
  }
  while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &bar, 0)) {
  }
  float4 got = inbox[threadIdx.x];
  out[blockIdx.x * 128 + threadIdx.x] =
      got.x + got.y + got.z + got.w + tile[threadIdx.x % 32][threadIdx.x / 4];
  cluster_arrive();
  cluster_wait();
}
