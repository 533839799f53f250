// attnreg attention engine: the backward pass (vector-Jacobian products) of softmax, nw_rbf and
// LLA, as float64 references (attention.hpp, "backward").
//
// Per query i with its keys j in [lo, hi], logits l_j (dot: a q'k_j; rbf: -(a/2)||q - k_j||^2),
// w_j = exp(l_j - max_j l_j), and g = dO_i:
//
// softmax / nw_rbf: p_j = w_j / omega, o = sum p_j v_j, u_j = g'v_j, L = g'o;
//   dV_j += p_j g,  dl_j = p_j (u_j - L).
//
// LLA (Zuo et al. 2025, arXiv:2510.01450, eqs. 6-8 with the omega-scaled ridge of core/README.md,
// Conventions): z_j = k_j - q,
//   omega = sum w, mu = sum w z, Sigma = sum w z z' + lambda omega I, rho = Sigma^-1 mu,
//   delta = omega - mu'rho, e_j = 1 - z_j'rho, s_j = w_j e_j / delta, o = sum s_j v_j.
//   With u_j = g'v_j and L = g'o, L = (sum w_j u_j e_j) / delta; holding rho fixed, its
//   derivative in rho is rbar = (L mu - c) / delta with c = sum w_j u_j z_j. The adjoint of
//   rho = Sigma^-1 mu is ONE more solve with the same Sigma (same Cholesky factor):
//   y = Sigma^-1 rbar, contributing y'dmu - y'dSigma rho. Collecting terms, with
//   f_j = (u_j - L) / delta + y'z_j:
//     dV_j    += s_j g
//     dw_j     = e_j f_j - lambda y'rho
//     dz_j     = w_j (e_j y - f_j rho)
//     dlambda  = -omega y'rho
//   and dl_j = w_j dw_j. The output is invariant to a common factor of the weights (the ridge
//   scales with omega), so the running max needs no gradient: sum_j w_j dw_j = 0.
// Then the kernel: dot, dq += a sum dl_j k_j, dk_j += a dl_j q; rbf, dz_j += -a dl_j z_j.
// Finally z_j = k_j - q: dk_j += dz_j, dq -= sum dz_j.
//
// Threads: one (batch, head) per work item, its queries in order, dK and dV accumulated in a
// float64 buffer of that item: bitwise identical for every thread count.
#include <cmath>
#include <sstream>

#include "attnreg/detail/attention_internal.hpp"

namespace attnreg {
namespace attention {

namespace {

using detail::i64;

template <class T>
View<T> writable(const View<const T>& v) {
  View<T> w;
  w.data = const_cast<T*>(v.data);
  for (int i = 0; i < 4; ++i) {
    w.shape[i] = v.shape[i];
    w.strides[i] = v.strides[i];
  }
  return w;
}

template <class T>
void check_grad_view(const View<T>& g, const std::int64_t want[4], const char* name,
                     const char* like) {
  check::require(g.data != nullptr, name, "data pointer is null (pass an allocated array)");
  for (int i = 0; i < 4; ++i) {
    if (g.shape[i] != want[i]) {
      std::ostringstream msg;
      msg << "shape (" << g.shape[0] << ", " << g.shape[1] << ", " << g.shape[2] << ", "
          << g.shape[3] << ") must be that of " << like << " (" << want[0] << ", " << want[1]
          << ", " << want[2] << ", " << want[3] << ")";
      check::require(false, name, msg.str());
    }
    if (g.shape[i] > 1 && g.strides[i] == 0) {
      check::require(false, name,
                     "has a zero (broadcast) stride; gradients are written per element: pass "
                     "an array of its own");
    }
  }
}

struct WS {
  std::vector<double> q, g, dq, l, w, z, u, e, f, Sig, rho, y, mu, c, dK, dV;
};

/// Query i's keys [lo, lo + n): ws.q = q_i, ws.g = dO_i, z_j = k_j - q (explicit centring, as
/// the naive forward), u_j = g'v_j, and the weights w_j = exp(l_j - max l); returns omega.
template <class T>
double query_weights(const detail::Plan& p, const View<const T>& Q, const View<const T>& K,
                     const View<const T>& V, const View<const T>& dO, i64 b, i64 h, i64 i,
                     i64 lo, i64 n, WS& ws) {
  const i64 d = p.d, dv = p.dv;
  for (i64 c = 0; c < d; ++c) ws.q[c] = Q.at(b, h, i, c);
  for (i64 c = 0; c < dv; ++c) ws.g[c] = dO.at(b, h, i, c);
  ws.l.resize(n);
  ws.w.resize(n);
  ws.u.resize(n);
  ws.z.resize(static_cast<std::size_t>(n * d));
  // Logits, shifted by their max.
  double mx = -HUGE_VAL;
  for (i64 j = 0; j < n; ++j) {
    double* zj = ws.z.data() + j * d;
    double l = 0.0, zz = 0.0;
    for (i64 c = 0; c < d; ++c) {
      const double kc = K.at(b, h, lo + j, c);
      zj[c] = kc - ws.q[c];
      l += kc * ws.q[c];
      zz += zj[c] * zj[c];
    }
    ws.l[j] = p.rbf ? -0.5 * p.a * zz : p.a * l;
    mx = std::max(mx, ws.l[j]);
    double uj = 0.0;
    for (i64 c = 0; c < dv; ++c) uj += ws.g[c] * static_cast<double>(V.at(b, h, lo + j, c));
    ws.u[j] = uj;
  }
  double omega = 0.0;
  for (i64 j = 0; j < n; ++j) {
    ws.w[j] = std::exp(ws.l[j] - mx);
    omega += ws.w[j];
  }
  return omega;
}

/// softmax / nw_rbf: dV_j += p_j g, and ws.l becomes dl_j = p_j (u_j - L).
void softmax_logit_grads(i64 dv, i64 lo, i64 n, double omega, WS& ws) {
  double L = 0.0;
  for (i64 j = 0; j < n; ++j) L += ws.w[j] / omega * ws.u[j];
  for (i64 j = 0; j < n; ++j) {
    const double pj = ws.w[j] / omega;
    double* dvj = ws.dV.data() + (lo + j) * dv;
    for (i64 c = 0; c < dv; ++c) dvj[c] += pj * ws.g[c];
    ws.l[j] = pj * (ws.u[j] - L);
  }
}

/// LLA, the forward's statistics: mu, the Cholesky factor of Sigma (in ws.Sig) and rho;
/// returns delta = omega - mu'rho.
double lla_solve(const detail::Plan& p, i64 b, i64 h, i64 i, i64 n, double omega,
                 double lambda, WS& ws) {
  const i64 d = p.d;
  std::fill(ws.mu.begin(), ws.mu.end(), 0.0);
  std::fill(ws.Sig.begin(), ws.Sig.end(), 0.0);
  for (i64 j = 0; j < n; ++j) {
    const double* zj = ws.z.data() + j * d;
    const double wj = ws.w[j];
    for (i64 r = 0; r < d; ++r) {
      ws.mu[r] += wj * zj[r];
      const double wz = wj * zj[r];
      for (i64 c = 0; c <= r; ++c) ws.Sig[r * d + c] += wz * zj[c];
    }
  }
  for (i64 r = 0; r < d; ++r) {
    ws.Sig[r * d + r] += local_solve::ridge_diagonal(lambda, omega);
    for (i64 c = 0; c < r; ++c) ws.Sig[c * d + r] = ws.Sig[r * d + c];
  }
  if (!tile::cholesky(ws.Sig.data(), static_cast<int>(d)))
    detail::throw_not_pd("LLA backward", b, h, i);
  std::copy(ws.mu.begin(), ws.mu.end(), ws.rho.begin());
  tile::cholesky_solve(ws.Sig.data(), static_cast<int>(d), ws.rho.data());
  const double delta = omega - tile::dot(ws.mu.data(), ws.rho.data(), static_cast<int>(d));
  if (!(delta > 0) || !std::isfinite(delta))
    detail::throw_bad_delta("LLA backward", delta, b, h, i);
  return delta;
}

/// LLA (the file comment): dV_j += s_j g, dridge[i] = dlambda, ws.l becomes dl_j and z_j
/// becomes dz_j (with rbf's kernel term); returns delta / omega.
double lla_logit_grads(const detail::Plan& p, i64 b, i64 h, i64 i, i64 lo, i64 n,
                       double omega, double* dridge, WS& ws) {
  const i64 d = p.d, dv = p.dv;
  const double lambda = p.ridge_at(b, h, i);
  const double delta = lla_solve(p, b, h, i, n, omega, lambda, ws);
  ws.e.resize(n);
  ws.f.resize(n);
  double L = 0.0;
  std::fill(ws.c.begin(), ws.c.end(), 0.0);
  for (i64 j = 0; j < n; ++j) {
    const double* zj = ws.z.data() + j * d;
    ws.e[j] = 1.0 - tile::dot(zj, ws.rho.data(), static_cast<int>(d));
    const double sj = ws.w[j] * ws.e[j] / delta;
    L += sj * ws.u[j];
    double* dvj = ws.dV.data() + (lo + j) * dv;
    for (i64 c = 0; c < dv; ++c) dvj[c] += sj * ws.g[c];
    const double wu = ws.w[j] * ws.u[j];
    for (i64 c = 0; c < d; ++c) ws.c[c] += wu * zj[c];
  }
  // The adjoint solve: y = Sigma^-1 (L mu - c) / delta, with the factor of the forward.
  for (i64 c = 0; c < d; ++c) ws.y[c] = (L * ws.mu[c] - ws.c[c]) / delta;
  tile::cholesky_solve(ws.Sig.data(), static_cast<int>(d), ws.y.data());
  const double yr = tile::dot(ws.y.data(), ws.rho.data(), static_cast<int>(d));
  if (dridge) dridge[i] = -omega * yr;
  for (i64 j = 0; j < n; ++j) {
    double* zj = ws.z.data() + j * d;
    const double fj = (ws.u[j] - L) / delta + tile::dot(ws.y.data(), zj, static_cast<int>(d));
    const double dl = ws.w[j] * (ws.e[j] * fj - lambda * yr);
    ws.l[j] = dl;
    // zj becomes dz_j (the forward no longer needs it; rbf's kernel term uses z first).
    for (i64 c = 0; c < d; ++c) {
      double dz = ws.w[j] * (ws.e[j] * ws.y[c] - fj * ws.rho[c]);
      if (p.rbf) dz -= p.a * dl * zj[c];
      zj[c] = dz;
    }
  }
  return delta / omega;
}

/// The kernel and the centring: from dl_j (ws.l) and, for LLA, dz_j (ws.z), accumulates dk_j
/// into ws.dK and dq into ws.dq.
template <class T>
void key_query_grads(const detail::Plan& p, const View<const T>& K, i64 b, i64 h, i64 lo, i64 n,
                     WS& ws) {
  const i64 d = p.d;
  const double a = p.a;
  const bool lla = p.method == Method::lla;
  for (i64 j = 0; j < n; ++j) {
    double* dkj = ws.dK.data() + (lo + j) * d;
    const double dl = ws.l[j];
    if (lla) {
      const double* dz = ws.z.data() + j * d;
      for (i64 c = 0; c < d; ++c) {
        dkj[c] += dz[c];
        ws.dq[c] -= dz[c];
      }
    } else if (p.rbf) {
      const double* zj = ws.z.data() + j * d;
      for (i64 c = 0; c < d; ++c) {
        const double dz = -a * dl * zj[c];
        dkj[c] += dz;
        ws.dq[c] -= dz;
      }
    }
    if (!p.rbf) {
      for (i64 c = 0; c < d; ++c) {
        dkj[c] += a * dl * ws.q[c];
        ws.dq[c] += a * dl * static_cast<double>(K.at(b, h, lo + j, c));
      }
    }
  }
}

/// Gradients of one (batch, head): dq rows written to dQ directly, dK/dV accumulated in
/// ws.dK/ws.dV (n_k x d, n_k x dv) and written at the end. dridge[i] receives dlambda_i (LLA).
/// Returns the smallest delta / omega (LLA; 1 otherwise).
template <class T>
double backward_head(const detail::Plan& p, const View<const T>& Q, const View<const T>& K,
                     const View<const T>& V, const View<const T>& dO, const View<T>& dQ,
                     const View<T>& dK, const View<T>& dV, i64 b, i64 h, double* dridge,
                     WS& ws) {
  const i64 nq = p.geo.n_q, nk = p.geo.n_k, d = p.d, dv = p.dv;
  ws.dK.assign(static_cast<std::size_t>(nk * d), 0.0);
  ws.dV.assign(static_cast<std::size_t>(nk * dv), 0.0);
  for (std::vector<double>* v : {&ws.q, &ws.dq, &ws.rho, &ws.y, &ws.mu, &ws.c}) v->resize(d);
  ws.g.resize(dv);
  ws.Sig.resize(static_cast<std::size_t>(d * d));
  double min_rel = 1.0;
  for (i64 i = 0; i < nq; ++i) {
    i64 lo, hi;
    p.geo.range(i, lo, hi);
    const i64 n = hi - lo + 1;
    std::fill(ws.dq.begin(), ws.dq.end(), 0.0);
    const double omega = query_weights(p, Q, K, V, dO, b, h, i, lo, n, ws);
    // ws.l becomes dl_j, the gradient of the logits.
    if (p.method == Method::lla)
      min_rel = std::min(min_rel, lla_logit_grads(p, b, h, i, lo, n, omega, dridge, ws));
    else
      softmax_logit_grads(dv, lo, n, omega, ws);
    key_query_grads(p, K, b, h, lo, n, ws);
    for (i64 c = 0; c < d; ++c) dQ.at(b, h, i, c) = static_cast<T>(ws.dq[c]);
  }
  detail::unpack_rows(ws.dK.data(), d, nk, dK, b, h, 0);
  detail::unpack_rows(ws.dV.data(), dv, nk, dV, b, h, 0);
  return min_rel;
}

}  // namespace

template <class T>
Diagnostics backward(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                     const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                     const View<T>& dV, const Options& opt, std::vector<double>* d_ridge) {
  check::require(opt.method == Method::softmax || opt.method == Method::nw_rbf ||
                     opt.method == Method::lla,
                 "method",
                 "the backward pass exists for softmax, nw_rbf and lla, not " +
                     to_string(opt.method));
  const View<T> dO_w = writable(dO);
  const detail::Plan p = detail::make_plan<T>(Q, K, &V, &dO_w, opt, "dO");
  detail::check_finite(dO, "dO");
  check_grad_view(dQ, Q.shape, "dQ", "Q");
  check_grad_view(dK, K.shape, "dK", "K");
  check_grad_view(dV, V.shape, "dV", "V");
  const bool lla = p.method == Method::lla;
  if (lla) detail::check_ridge_rank(p, "lla");

  const i64 nq = p.geo.n_q;
  std::vector<double> dr(lla ? static_cast<std::size_t>(p.B * p.H * nq) : 0, 0.0);
  std::vector<double> min_rel(static_cast<std::size_t>(p.B * p.H), 1.0);
  detail::parallel_items<WS>(p.B * p.H, p.n_threads, [&](i64 item, WS& ws) {
    const i64 b = item / p.H, h = item % p.H;
    min_rel[item] = backward_head(p, Q, K, V, dO, dQ, dK, dV, b, h,
                                  lla ? dr.data() + item * nq : nullptr, ws);
  });

  Diagnostics diag;
  diag.method = to_string(p.method) + "/backward";
  diag.n_threads = p.n_threads;
  if (lla) {
    double mr = 1.0;
    for (double x : min_rel) mr = std::min(mr, x);
    detail::add_denominator_warning(diag, mr, false);
    if (d_ridge) {
      // The shape of the ridge that was given: scalar, per position, or per (b, h, i); summed
      // over what it is shared by, in a fixed order.
      const std::size_t nr = opt.ridge_per_query.size();
      if (nr == 0) {
        double s = 0.0;
        for (double x : dr) s += x;
        d_ridge->assign(1, s);
      } else if (static_cast<i64>(nr) == nq) {
        d_ridge->assign(nr, 0.0);
        for (i64 bh = 0; bh < p.B * p.H; ++bh)
          for (i64 i = 0; i < nq; ++i) (*d_ridge)[i] += dr[bh * nq + i];
      } else {
        *d_ridge = dr;
      }
    }
  } else if (d_ridge) {
    d_ridge->clear();
  }
  return diag;
}

template <class T>
Diagnostics softmax_vjp(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                        const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                        const View<T>& dV, Options opt) {
  opt.method = Method::softmax;
  return backward<T>(Q, K, V, dO, dQ, dK, dV, opt, nullptr);
}

template <class T>
Diagnostics lla_vjp(const View<const T>& Q, const View<const T>& K, const View<const T>& V,
                    const View<const T>& dO, const View<T>& dQ, const View<T>& dK,
                    const View<T>& dV, std::vector<double>* d_ridge, Options opt) {
  opt.method = Method::lla;
  return backward<T>(Q, K, V, dO, dQ, dK, dV, opt, d_ridge);
}

#define ATTNREG_INSTANTIATE_BACKWARD(T)                                                       \
  template Diagnostics backward<T>(const View<const T>&, const View<const T>&,                \
                                   const View<const T>&, const View<const T>&, const View<T>&, \
                                   const View<T>&, const View<T>&, const Options&,            \
                                   std::vector<double>*);                                     \
  template Diagnostics softmax_vjp<T>(const View<const T>&, const View<const T>&,             \
                                      const View<const T>&, const View<const T>&,             \
                                      const View<T>&, const View<T>&, const View<T>&,         \
                                      Options);                                               \
  template Diagnostics lla_vjp<T>(const View<const T>&, const View<const T>&,                 \
                                  const View<const T>&, const View<const T>&, const View<T>&, \
                                  const View<T>&, const View<T>&, std::vector<double>*,       \
                                  Options);
ATTNREG_INSTANTIATE_BACKWARD(float)
ATTNREG_INSTANTIATE_BACKWARD(double)
#undef ATTNREG_INSTANTIATE_BACKWARD

}  // namespace attention
}  // namespace attnreg
