// thrust::transform with a binary functor (saxpy) over float.
#include <thrust/execution_policy.h>
#include <thrust/transform.h>

struct Saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const {
    return a * x + y;
  }
};

void saxpy(const float *x, const float *y, float *out, int n, float a) {
  thrust::transform(thrust::device, x, x + n, y, out, Saxpy{a});
}
