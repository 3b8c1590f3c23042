// Two elementwise kernels: one with a grid-stride loop (correct for any 1-D
// block and grid), one with one thread per element (a smaller block over the
// same grid leaves elements undone).
//
// Generated with:
//   nvcc -arch=sm_90a -ptx -O3 grid_stride.cu -o grid_stride.ptx

extern "C" __global__ void saxpy_stride(float *y, const float *x, float a,
                                        int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

// One thread per element, no loop: a smaller block leaves elements undone.
extern "C" __global__ void saxpy_once(float *y, const float *x, float a,
                                      int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
