// Kernels of one module for --probe kernels=: scale_kernel is both a
// function and the base name of ops::scale_kernel; add_kernel names two
// instances of a template.
//
// Generated with:
//   nvcc -arch=sm_90a -ptx -O3 select.cu -o select.ptx

__global__ void scale_kernel(float *out, const float *in, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a * in[i];
}

template <typename T>
__global__ void add_kernel(T *out, const T *x, const T *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = x[i] + y[i];
}
template __global__ void add_kernel<float>(float *, const float *,
                                           const float *, int);
template __global__ void add_kernel<double>(double *, const double *,
                                            const double *, int);

namespace ops {
__global__ void scale_kernel(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] *= 2.0f;
}
} // namespace ops
