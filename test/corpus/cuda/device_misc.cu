// Everyday constructs of public CUDA code that reach PTX in their own
// forms, built with -O3 -lineinfo (whole program).
//
// Exercises: printf (`.extern .func vprintf`, `$str` byte arrays) and
// assert (`__assertfail`), which whole-program ptxas resolves itself, so
// the file needs no -c despite its `.extern .func`s; virtual functions
// (vtables as `.global` arrays of function addresses, indirect `call` with
// a `.callprototype` label); a switch in a __noinline__ function (nvcc
// 13 emits compare-and-branch chains, not brx.idx); `#pragma unroll 1`
// (`.pragma "nounroll"`);
// texture and surface objects (tex.2d, suld/sust); cooperative_groups grid
// sync; cuda::atomic_ref with scopes and orders (atom.add.acq_rel.gpu,
// ld.acquire.gpu, fence.sc.sys); warp intrinsics (redux.sync, match.any.sync);
// __nanosleep, clock64, %globaltimer; __maxnreg__ and
// __launch_bounds__(threads, min blocks) (.maxnreg, .maxntid,
// .minnctapersm); a dynamically sized local array (alloca.u64, %SP).
#include <cooperative_groups.h>
#include <cuda/atomic>
#include <cassert>
#include <cstdio>

namespace cg = cooperative_groups;

struct Shape {
  __device__ virtual float area() const = 0;
  __device__ virtual float scale(float s) const { return area() * s; }
};
struct Square : Shape {
  float a;
  __device__ explicit Square(float a) : a(a) {}
  __device__ float area() const override { return a * a; }
};
struct Disk : Shape {
  float r;
  __device__ explicit Disk(float r) : r(r) {}
  __device__ float area() const override { return 3.14159265f * r * r; }
  __device__ float scale(float s) const override { return area() * s * s; }
};

__global__ void virtual_dispatch(const float *__restrict__ sizes, const int *__restrict__ kinds,
                                 float *__restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  Square sq(sizes[i]);
  Disk dk(sizes[i]);
  const Shape *s = kinds[i] ? static_cast<const Shape *>(&dk) : static_cast<const Shape *>(&sq);
  out[i] = s->scale(2.0f);
}

__device__ __noinline__ float apply_op(int op, float a, float b) {
  switch (op) {
  case 0: return a + b;
  case 1: return a - b;
  case 2: return a * b;
  case 3: return a / b;
  case 4: return fminf(a, b);
  case 5: return fmaxf(a, b);
  case 6: return a * a + b;
  case 7: return sqrtf(fabsf(a)) + b;
  default: return 0.0f;
  }
}

__global__ void __launch_bounds__(256, 2)
    interpret(const int *__restrict__ ops, const float *__restrict__ args, float *__restrict__ out,
              int n_ops, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float acc = args[i];
#pragma unroll 1
  for (int k = 0; k < n_ops; ++k)
    acc = apply_op(ops[k], acc, args[(i + k) % n]);
  assert(acc == acc && "interpreter produced NaN");
  if (i == 0)
    printf("interpret: %d ops, acc[0] = %f, block %d of %d\n", n_ops, acc, blockIdx.x, gridDim.x);
  out[i] = acc;
}

__global__ void __maxnreg__(64)
    texture_surface(cudaTextureObject_t tex, cudaSurfaceObject_t surf, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float4 t = tex2D<float4>(tex, (x + 0.5f) / w, (y + 0.5f) / h);
  float4 old = surf2Dread<float4>(surf, x * static_cast<int>(sizeof(float4)), y);
  surf2Dwrite(make_float4(t.x + old.x, t.y + old.y, t.z + old.z, t.w), surf,
              x * static_cast<int>(sizeof(float4)), y);
}

// Two phases separated by a grid-wide barrier (launched cooperatively).
__global__ void grid_two_phase(float *__restrict__ data, unsigned *__restrict__ flags,
                               unsigned long long *__restrict__ times, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
  int i = grid.thread_rank();
  unsigned long long t0 = clock64();
  unsigned long long g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  if (i < n)
    data[i] *= 2.0f;
  grid.sync();
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> flag(flags[blockIdx.x % 8]);
  unsigned seen = flag.fetch_add(1, cuda::std::memory_order_acq_rel);
  while (cuda::atomic_ref<unsigned, cuda::thread_scope_device>(flags[8]).load(
             cuda::std::memory_order_acquire) == 0 &&
         seen == 0xffffffffu)
    __nanosleep(100);
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_system);
  unsigned total = __reduce_add_sync(0xffffffffu, seen);
  unsigned same = __match_any_sync(0xffffffffu, seen & 7);
  if (i < n)
    data[i] += data[(i + 1) % n] + static_cast<float>(total + __popc(same) + warp.thread_rank());
  times[i] = clock64() - t0 + g0;
}

// A per-thread scratch array whose size is known only at run time.
__global__ void local_scratch(const int *__restrict__ lens, const float *__restrict__ in,
                              float *__restrict__ out) {
  int len = lens[blockIdx.x] & 63;
  float *scratch = static_cast<float *>(alloca(len * sizeof(float) + sizeof(float)));
  for (int k = 0; k <= len; ++k)
    scratch[k] = in[blockIdx.x * 64 + (k + threadIdx.x) % 64];
  float s = 0.0f;
  for (int k = len; k >= 0; --k)
    s = s * 0.5f + scratch[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
