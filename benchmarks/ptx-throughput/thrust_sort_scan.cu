// A small host program whose -G device code is large: thrust's sort, scan
// and reduce instantiate CUB's radix sort, scan and reduce kernels with their
// debug information. Built by make-large-ptx.sh for the speed benchmark.
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

// One non-template kernel keeps nvcc's internal names stable between runs.
__global__ void touch(int *p) { p[threadIdx.x] += 1; }

int sortScanReduce(thrust::device_vector<int> &a,
                   thrust::device_vector<float> &b,
                   thrust::device_vector<double> &c) {
  thrust::sort(a.begin(), a.end());
  thrust::sort(b.begin(), b.end());
  thrust::inclusive_scan(c.begin(), c.end(), c.begin());
  return thrust::reduce(a.begin(), a.end());
}
