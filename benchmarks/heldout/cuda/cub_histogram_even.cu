// cub::DeviceHistogram::HistogramEven: 256 even bins over unsigned char
// samples in [0, 256).
#include <cub/device/device_histogram.cuh>

cudaError_t histogramEven(void *temp, size_t &tempBytes,
                          const unsigned char *samples, int *histogram, int n,
                          cudaStream_t stream) {
  return cub::DeviceHistogram::HistogramEven(temp, tempBytes, samples,
                                             histogram, 257, 0, 256, n, stream);
}
