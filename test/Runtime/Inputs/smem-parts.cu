// Two kernels of one module for gpu-run's shared memory tests: the first
// uses dynamic shared memory (an extern __shared__ array), the second none.
// Their mangled names are long, as library kernels' are: fused, they make a
// name of more than 100 characters.
// Regenerate: nvcc -arch=sm_90a -ptx -O3 smem-parts.cu -o smem-parts.ptx
namespace gpuopt_tests {
template <typename T>
__global__ void __launch_bounds__(128)
    reverse_rows_through_dynamic_shared_memory(const T *in, T *out,
                                               unsigned n) {
  extern __shared__ float buf[];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  if (i < n)
    out[i] = buf[blockDim.x - 1 - threadIdx.x];
}
template __global__ void
reverse_rows_through_dynamic_shared_memory<float>(const float *, float *,
                                                  unsigned);

template <typename T>
__global__ void scale_in_a_grid_stride_loop(T *x, T a, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    x[i] *= a;
}
template __global__ void scale_in_a_grid_stride_loop<float>(float *, float,
                                                            unsigned);
} // namespace gpuopt_tests
