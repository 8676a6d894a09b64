// Contiguous bf16 <-> fp32 runs (bf16_rows.h), included inside an anonymous namespace by
// bf16_rows.cpp (portable) and bf16_rows_avx2.cpp (AVX2). Integer operations only, so every
// build gives the same bits; only static helpers (dtype_bf16.h) and builtins, see matmul_fma.cpp.

inline void bf16_decode_loop(const unsigned char* p, float* out, long n) {
  for (long i = 0; i < n; ++i) {
    unsigned short h;
    __builtin_memcpy(&h, p + 2 * i, 2);
    out[i] = __builtin_bit_cast(float, ncv::bf16_decode_bits(h));
  }
}

inline void bf16_encode_loop(const float* in, unsigned char* p, long n) {
  for (long i = 0; i < n; ++i) {
    const auto h =
        static_cast<unsigned short>(ncv::bf16_encode_bits(__builtin_bit_cast(unsigned int, in[i])));
    __builtin_memcpy(p + 2 * i, &h, 2);
  }
}
