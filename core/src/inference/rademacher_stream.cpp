// detail::RademacherStream: the wild bootstrap-t's Rademacher signs (rbc_multivariate.cpp), the
// top bits of the standard's mt19937_64 stream generated a 312-word state block at a time.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "attnreg/inference/diagnostics.hpp"

namespace attnreg {

namespace detail {

RademacherStream::RademacherStream(std::uint64_t seed) {
  // the seeding of std::mersenne_twister_engine (C++ standard [rand.eng.mers], f = 6364136223846793005)
  mt_[0] = seed;
  for (std::size_t i = 1; i < 312; ++i)
    mt_[i] = 6364136223846793005ULL * (mt_[i - 1] ^ (mt_[i - 1] >> 62)) + i;
}

void RademacherStream::twist() {
  constexpr std::size_t N = 312, M = 156;
  constexpr std::uint64_t A = 0xB5026F5AA96619E9ULL, UP = 0xFFFFFFFF80000000ULL,
                          LO = 0x7FFFFFFFULL;
  // the standard's recurrence in three loops without branches (so that they vectorise)
  for (std::size_t i = 0; i < N - M; ++i) {
    const std::uint64_t y = (mt_[i] & UP) | (mt_[i + 1] & LO);
    mt_[i] = mt_[i + M] ^ (y >> 1) ^ (A & (0 - (y & 1)));
  }
  for (std::size_t i = N - M; i < N - 1; ++i) {
    const std::uint64_t y = (mt_[i] & UP) | (mt_[i + 1] & LO);
    mt_[i] = mt_[i + M - N] ^ (y >> 1) ^ (A & (0 - (y & 1)));
  }
  const std::uint64_t y = (mt_[N - 1] & UP) | (mt_[0] & LO);
  mt_[N - 1] = mt_[M - 1] ^ (y >> 1) ^ (A & (0 - (y & 1)));
  next_ = 0;
}

void RademacherStream::fill(double* p, std::size_t n) {
  while (n > 0) {
    if (next_ == 312) twist();
    const std::size_t m = std::min(n, 312 - next_);
    const std::uint64_t* s = mt_ + next_;
    for (std::size_t t = 0; t < m; ++t) {  // the tempering, of which only the top bit is used
      std::uint64_t y = s[t];
      y ^= (y >> 29) & 0x5555555555555555ULL;
      y ^= (y << 17) & 0x71D67FFFEDA60000ULL;
      y ^= (y << 37) & 0xFFF7EEE000000000ULL;
      y ^= y >> 43;
      // +1.0 (0x3FF0...) when the top bit is set, -1.0 (0xBFF0...) otherwise, without a branch
      const std::uint64_t bits = 0x3FF0000000000000ULL | (((y >> 63) ^ 1) << 63);
      std::memcpy(p + t, &bits, sizeof bits);
    }
    p += m;
    n -= m;
    next_ += m;
  }
}

}  // namespace detail

}  // namespace attnreg
