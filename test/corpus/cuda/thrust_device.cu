// Debug build (-G) of Thrust and libcu++ used inside kernels, the way public
// code calls them with the thrust::seq execution policy: a functor with
// thrust::transform, thrust::sort (descending), thrust::inclusive_scan and
// thrust::reduce on per-thread arrays, thrust::complex, and cuda::std::
// array, span, variant (visit) and optional.
//
// Exercises: `.target sm_90a, debug`, deep chains of `.weak .func` template
// instantiations, and the `.noreturn` prototypes + definitions of
// cuda::std::terminate / __cccl_terminate, reached here through
// cuda::std::get on a variant holding another alternative
// (bad_variant_access) and optional::value().
#include <thrust/complex.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/functional.h>
#include <thrust/transform.h>
#include <cuda/std/array>
#include <cuda/std/optional>
#include <cuda/std/span>
#include <cuda/std/variant>

struct saxpy_functor {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

constexpr int kPerThread = 8;

// Each thread transforms, sorts (descending) and scans its own small array.
__global__ void per_thread_algorithms(const float *x, const float *y, float *out, float *totals,
                                      float a) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cuda::std::array<float, kPerThread> xs, ys, r;
  for (int k = 0; k < kPerThread; ++k) {
    xs[k] = x[t * kPerThread + k];
    ys[k] = y[t * kPerThread + k];
  }
  thrust::transform(thrust::seq, xs.begin(), xs.end(), ys.begin(), r.begin(), saxpy_functor{a});
  thrust::sort(thrust::seq, r.begin(), r.end(), thrust::greater<float>());
  thrust::inclusive_scan(thrust::seq, r.begin(), r.end(), r.begin());
  cuda::std::span<const float, kPerThread> view(r.data(), kPerThread);
  for (int k = 0; k < kPerThread; ++k)
    out[t * kPerThread + k] = view[k];
  totals[t] = thrust::reduce(thrust::seq, r.begin(), r.end(), 0.0f, thrust::maximum<float>());
}

// Complex rotation of interleaved (re, im) pairs.
__global__ void complex_rotate(const float2 *in, float2 *out, float angle, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  thrust::complex<float> z(in[i].x, in[i].y);
  thrust::complex<float> w = z * thrust::exp(thrust::complex<float>(0.0f, angle));
  out[i] = make_float2(w.real(), thrust::abs(w));
}

using Value = cuda::std::variant<int, float>;

struct to_float {
  __device__ float operator()(int v) const { return static_cast<float>(v); }
  __device__ float operator()(float v) const { return v; }
};

// Odd tags hold floats; cuda::std::get<int> on them terminates the kernel.
__global__ void variant_visit(const int *tags, const int *vals, float *sum_out, int *ints_out,
                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  Value v = (tags[i] & 1) ? Value(static_cast<float>(vals[i]) * 0.5f) : Value(vals[i]);
  sum_out[i] = cuda::std::visit(to_float{}, v);
  cuda::std::optional<int> o;
  if (tags[i] >= 0)
    o = cuda::std::get<int>(v);
  ints_out[i] = o.value();
}
