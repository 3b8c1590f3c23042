// BLAKE2b-512 (RFC 7693, unkeyed, 64-byte digest) of an 80-byte block header
// with a per-thread nonce: the full compression function with the real IV and
// sigma schedule, 12 rounds. Part of the project's own benchmark kernel suite.
//
// Message of thread g (80 bytes): bytes 0..75 are header bytes 0..75, bytes
// 76..79 are nonce = start_nonce + g (32-bit, wraps) in little-endian order.
// digest = BLAKE2b-512(message), i.e. hashlib.blake2b(message).digest().
// The 80 bytes fit one 128-byte block: one compression with t = 80 and the
// final-block flag set, after h[0] ^= 0x01010040 (digest length 64, no key).
//
// Parameters:
//   header       const unsigned long long*  [10], the 80 header bytes
//                                           (bytes 76..79 are ignored)
//   start_nonce  unsigned int
//   num_nonces   unsigned int
//   out          unsigned long long*        [num_nonces][8]; the 64 digest
//                                           bytes of nonce start_nonce + i
//                                           at out[8i] (byte order as
//                                           hashlib prints them)
//
// Launch shape: 1-D blocks of 256 threads, 1-D grid of
// ceil(num_nonces / 256) blocks, no dynamic shared memory.
//
// Problem size that fills an H100: num_nonces = 2^24 (65536 blocks); compute
// bound, 1 GiB of digests written.

__device__ __forceinline__ unsigned long long rotr64(unsigned long long x,
                                                     int n) {
  return (x >> n) | (x << (64 - n));
}

// The BLAKE2b G mixing function.
__device__ __forceinline__ void
mixG(unsigned long long &a, unsigned long long &b, unsigned long long &c,
     unsigned long long &d, unsigned long long x, unsigned long long y) {
  a = a + b + x;
  d = rotr64(d ^ a, 32);
  c = c + d;
  b = rotr64(b ^ c, 24);
  a = a + b + y;
  d = rotr64(d ^ a, 16);
  c = c + d;
  b = rotr64(b ^ c, 63);
}

extern "C" __global__ void __launch_bounds__(256)
    blake2b_512(const unsigned long long *__restrict__ header,
                unsigned int start_nonce, unsigned int num_nonces,
                unsigned long long *__restrict__ out) {
  // Message schedule; rounds 10 and 11 reuse rows 0 and 1. Indexed only with
  // compile-time constants after unrolling, so it folds away.
  constexpr unsigned char kSigma[10][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
      {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
      {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
      {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
      {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};
  constexpr unsigned long long kIV[8] = {
      0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
      0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
      0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};

  const unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= num_nonces)
    return;
  const unsigned int nonce = start_nonce + gid;

  unsigned long long m[16];
#pragma unroll
  for (int i = 0; i < 9; ++i)
    m[i] = header[i];
  // Bytes 76..79 are the upper half of little-endian word 9.
  m[9] = (header[9] & 0xffffffffULL) | ((unsigned long long)nonce << 32);
#pragma unroll
  for (int i = 10; i < 16; ++i)
    m[i] = 0;

  unsigned long long h[8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
    h[i] = kIV[i];
  h[0] ^= 0x01010040ULL; // Parameter block: fanout 1, depth 1, 64-byte digest.

  unsigned long long v[16];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    v[i] = h[i];
    v[i + 8] = kIV[i];
  }
  v[12] ^= 80ULL; // Byte counter t (low word); the high word stays 0.
  v[14] = ~v[14]; // Final block flag.

#pragma unroll
  for (int r = 0; r < 12; ++r) {
    const unsigned char *s = kSigma[r % 10];
    mixG(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
    mixG(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
    mixG(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
    mixG(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
    mixG(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
    mixG(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
    mixG(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
    mixG(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
  }

#pragma unroll
  for (int i = 0; i < 8; ++i)
    out[(unsigned long long)gid * 8 + i] = h[i] ^ v[i] ^ v[i + 8];
}
