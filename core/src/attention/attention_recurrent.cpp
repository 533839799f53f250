// attnreg attention engine: linear attention (feature maps) and Mesa, the two running-state
// recurrences of the float64 paths (attention_internal.hpp).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"

namespace attnreg {
namespace attention {
namespace detail {

/// Feature maps of linear attention (attention.hpp): phi has d or d + 1 entries.
i64 feature_dim(const Plan& p) { return p.feature_map == FeatureMap::epanechnikov ? p.d + 1 : p.d; }

template <class T>
void feature_row(const Plan& p, const View<const T>& X, i64 b, i64 h, i64 s, double* phi) {
  const i64 d = p.d;
  switch (p.feature_map) {
    case FeatureMap::elu_plus_one:
      for (i64 c = 0; c < d; ++c) {
        const double x = X.at(b, h, s, c);
        phi[c] = x > 0 ? x + 1.0 : std::exp(x);
      }
      break;
    case FeatureMap::relu:
      for (i64 c = 0; c < d; ++c) phi[c] = std::max(0.0, static_cast<double>(X.at(b, h, s, c)));
      break;
    case FeatureMap::identity:
      for (i64 c = 0; c < d; ++c) phi[c] = X.at(b, h, s, c);
      break;
    case FeatureMap::epanechnikov: {
      // Seed 000: phi(x) = [sqrt(1 - 2/tau), sqrt(2/tau) x]; phi(q)'phi(k) = 1 - 2/tau +
      // (2/tau) q'k, the Epanechnikov kernel max(0, 1 - ||q - k||^2 / tau) on unit-norm q, k
      // when tau >= 4.
      phi[0] = std::sqrt(1.0 - 2.0 / p.feature_tau);
      const double s2 = std::sqrt(2.0 / p.feature_tau);
      for (i64 c = 0; c < d; ++c) phi[c + 1] = s2 * X.at(b, h, s, c);
      break;
    }
  }
}

// ---------------------------------------------------------------- linear attention and Mesa

template <class T>
void run_linear(const Plan& p, const View<const T>& Q, const View<const T>& K,
                const View<const T>& V, const View<T>& out, Diagnostics&) {
  const i64 df = feature_dim(p), dv = p.dv;
  struct WS {
    std::vector<double> S, z, phi, phik, o;
  };
  parallel_items<WS>(p.B * p.H, p.n_threads, [&](i64 item, WS& ws) {
    const i64 b = item / p.H, h = item % p.H;
    ws.S.assign(static_cast<std::size_t>(df * dv), 0.0);  // sum phi(k) v'
    ws.z.assign(static_cast<std::size_t>(df), 0.0);       // sum phi(k)
    ws.phi.resize(df);
    ws.phik.resize(df);
    ws.o.resize(dv);
    i64 added = 0, removed = 0;  // keys [removed, added) are in the state
    auto update = [&](i64 j, double sign) {
      feature_row(p, K, b, h, j, ws.phik.data());
      for (i64 r = 0; r < df; ++r) {
        const double f = sign * ws.phik[r];
        ws.z[r] += f;
        for (i64 c = 0; c < dv; ++c) ws.S[r * dv + c] += f * V.at(b, h, j, c);
      }
    };
    for (i64 i = 0; i < p.geo.n_q; ++i) {
      i64 lo, hi;
      p.geo.range(i, lo, hi);
      // The recurrence S_i = S_{i-1} + phi(k_i) v_i' (minus the key leaving a window).
      while (added <= hi) update(added++, 1.0);
      while (removed < lo) update(removed++, -1.0);
      feature_row(p, Q, b, h, i, ws.phi.data());
      for (i64 c = 0; c < dv; ++c) {
        double s = 0;
        for (i64 r = 0; r < df; ++r) s += ws.phi[r] * ws.S[r * dv + c];
        ws.o[c] = s;
      }
      if (p.normalize) {
        const double den = tile::dot(ws.phi.data(), ws.z.data(), static_cast<int>(df));
        if (!(den > 0) || !std::isfinite(den)) {
          std::ostringstream msg;
          msg << "linear attention: the normaliser sum_j phi(q)'phi(k_j) is " << den << " at "
              << where(b, h, i)
              << " (the feature map is not positive there); use feature_map = "
                 "\"elu_plus_one\", or normalize = false";
          throw NumericalError(msg.str());
        }
        for (double& x : ws.o) x /= den;
      }
      for (i64 c = 0; c < dv; ++c) out.at(b, h, i, c) = static_cast<T>(ws.o[c]);
    }
  });
}

template <class T>
void run_mesa(const Plan& p, const View<const T>& Q, const View<const T>& K,
              const View<const T>& V, const View<T>& out, Diagnostics&) {
  const i64 d = p.d, dv = p.dv;
  struct WS {
    std::vector<double> H, Sv, L, x, k;
  };
  parallel_items<WS>(p.B * p.H, p.n_threads, [&](i64 item, WS& ws) {
    const i64 b = item / p.H, h = item % p.H;
    ws.H.assign(static_cast<std::size_t>(d * d), 0.0);    // H = sum k k'
    ws.Sv.assign(static_cast<std::size_t>(dv * d), 0.0);  // S = sum v k'
    ws.L.resize(static_cast<std::size_t>(d * d));
    ws.x.resize(d);
    ws.k.resize(d);
    i64 added = 0, removed = 0;
    i64 f_lo = -1, f_hi = -1;
    double f_lam = -1;  // the (range, ridge) that ws.L factors
    auto update = [&](i64 j, double sign) {
      for (i64 c = 0; c < d; ++c) ws.k[c] = K.at(b, h, j, c);
      for (i64 r = 0; r < d; ++r)
        for (i64 c = 0; c < d; ++c) ws.H[r * d + c] += sign * ws.k[r] * ws.k[c];
      for (i64 a = 0; a < dv; ++a) {
        const double va = sign * static_cast<double>(V.at(b, h, j, a));
        for (i64 c = 0; c < d; ++c) ws.Sv[a * d + c] += va * ws.k[c];
      }
    };
    for (i64 i = 0; i < p.geo.n_q; ++i) {
      i64 lo, hi;
      p.geo.range(i, lo, hi);
      // Seed 002 eq. 2 as a recurrence: H_i = H_{i-1} + k_i k_i', S_i = S_{i-1} + v_i k_i'.
      while (added <= hi) update(added++, 1.0);
      while (removed < lo) update(removed++, -1.0);
      const double lam = p.ridge_at(b, h, i);
      if (lo != f_lo || hi != f_hi || lam != f_lam) {
        std::copy(ws.H.begin(), ws.H.end(), ws.L.begin());
        for (i64 r = 0; r < d; ++r) ws.L[r * d + r] += lam;
        if (!tile::cholesky(ws.L.data(), static_cast<int>(d))) throw_not_pd("Mesa", b, h, i);
        f_lo = lo;
        f_hi = hi;
        f_lam = lam;
      }
      for (i64 c = 0; c < d; ++c) ws.x[c] = Q.at(b, h, i, c);
      tile::cholesky_solve(ws.L.data(), static_cast<int>(d), ws.x.data());  // H_i^-1 q_i
      for (i64 a = 0; a < dv; ++a)
        out.at(b, h, i, a) =
            static_cast<T>(tile::dot(ws.Sv.data() + a * d, ws.x.data(), static_cast<int>(d)));
    }
  });
}

#define ATTNREG_INSTANTIATE(T)                                                                 \
  template void feature_row<T>(const Plan&, const View<const T>&, i64, i64, i64, double*);     \
  template void run_linear<T>(const Plan&, const View<const T>&, const View<const T>&,         \
                              const View<const T>&, const View<T>&, Diagnostics&);             \
  template void run_mesa<T>(const Plan&, const View<const T>&, const View<const T>&,           \
                            const View<const T>&, const View<T>&, Diagnostics&);
ATTNREG_INSTANTIATE(float)
ATTNREG_INSTANTIATE(double)
#undef ATTNREG_INSTANTIATE

}  // namespace detail
}  // namespace attention
}  // namespace attnreg
