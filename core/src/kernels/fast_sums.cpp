// attnreg: exact fast sums for compact kernels in 1-D (see fast_sums.hpp for the method).
#include "attnreg/kernels/fast_sums.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace attnreg {
namespace {

constexpr double kHalfPi = 1.5707963267948966192;
constexpr int kMaxPow = 24;  // largest power of u in any moment (tricube 9 + 2 * 3 + slack)
constexpr std::size_t kDirectWindow = 16;  // windows of at most this many points: direct sums

// A kernel's shape and -u k'(u) as polynomial (or cos / sin times polynomial) terms on each side
// of the query, from its traits (kernels/shapes/<name>.hpp, fast_sum_form).
using Term = kernels::FastSumTerm;
using KernelForm = kernels::FastSumForm;

KernelForm kernel_form(KernelType kt) {
  KernelForm f = dispatch_kernel(kt, [](auto k) {
    using K = decltype(k);
    if (!K::has_fast_sums)
      throw InvalidArgument(std::string("kernel: fast sums need a compact kernel (got ") +
                            K::name + ")");
    return K::fast_sum_form();
  });
  for (int s = 0; s < 2; ++s) {
    for (const Term& t : f.w[s]) f.max_deg = std::max(f.max_deg, t.deg);
    for (const Term& t : f.d[s]) f.max_deg = std::max(f.max_deg, t.deg);
  }
  return f;
}

// Compensated running sums of the features of sorted training points [start, pos).
struct Cursor {
  std::size_t pos = 0;
  std::size_t positive = 0;
  std::vector<double> s, e;
};

struct Engine {
  const FastMomentsProblem& P;
  KernelForm form;
  std::size_t C = 1, J = 0, NT = 1, F = 1, R = 0;
  std::vector<double> xs, as;  // sorted x and weights
  std::vector<double> ys;      // sorted Y, column-major n x k
  std::vector<std::size_t> rank;  // training index -> sorted position
  std::vector<double> binom;      // binom[n * (J + 1) + j] = C(n, j), n, j <= J

  explicit Engine(const FastMomentsProblem& p) : P(p), form(kernel_form(p.kernel)) {
    R = static_cast<std::size_t>(p.max_power);
    C = 1 + p.k;
    J = static_cast<std::size_t>(form.max_deg) + R;
    check::require(J <= static_cast<std::size_t>(kMaxPow), "max_power", "is too large for fast sums");
    NT = form.trig ? 2 : 1;
    F = NT * (J + 1);
    binom.assign((J + 1) * (J + 1), 0.0);
    for (std::size_t a = 0; a <= J; ++a) {
      binom[a * (J + 1)] = 1.0;
      for (std::size_t j = 1; j <= a; ++j)
        binom[a * (J + 1) + j] = binom[(a - 1) * (J + 1) + j - 1] +
                                 (j < a ? binom[(a - 1) * (J + 1) + j] : 0.0);
    }
    const std::size_t n = p.n;
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    if (!std::is_sorted(p.x, p.x + n))
      std::stable_sort(perm.begin(), perm.end(),
                       [&](std::size_t i, std::size_t j) { return p.x[i] < p.x[j]; });
    xs.resize(n);
    as.resize(n);
    ys.resize(n * p.k);
    rank.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t o = perm[i];
      xs[i] = p.x[o];
      as[i] = p.a ? p.a[o] : 1.0;
      for (std::size_t c = 0; c < p.k; ++c) ys[c * n + i] = p.Y[c * n + o];
      rank[o] = i;
    }
  }

  static int omp_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
  }
  // First sorted index i with pred(i) (pred is false then true along the sorted x).
  template <class Pred>
  std::size_t first_where(Pred pred) const {
    std::size_t lo = 0, hi = P.n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (pred(mid)) hi = mid; else lo = mid + 1;
    }
    return lo;
  }
  std::size_t first_in(double t) const {
    return first_where([&](std::size_t i) { return left_in(i, t); });
  }
  std::size_t first_out(double t) const {
    return first_where([&](std::size_t i) { return right_out(i, t); });
  }
  bool left_in(std::size_t i, double t) const {  // x_i is not left of the window
    const double u = xs[i] - t;
    return form.closed ? u >= -1.0 : u > -1.0;
  }
  bool right_out(std::size_t i, double t) const {  // x_i is right of the window
    const double u = xs[i] - t;
    return form.closed ? u > 1.0 : u >= 1.0;
  }

  void reset(Cursor& cu, std::size_t pos) const {
    cu.pos = pos;
    cu.positive = 0;
    cu.s.assign(F * C, 0.0);
    cu.e.assign(F * C, 0.0);
  }

  // Add the features of sorted points [cu.pos, target) centred at `centre`.
  // feat = a_i (cos, sin)(pi v / 2)^[trig] v^j, j = 0..J, of sorted point i, v = x_i - centre.
  void point_features(std::size_t i, double centre, double* feat) const {
    const double a = as[i];
    const double v = xs[i] - centre;
    double tv[2] = {1.0, 0.0};
    if (form.trig) {
      tv[0] = std::cos(kHalfPi * v);
      tv[1] = std::sin(kHalfPi * v);
    }
    for (std::size_t tt = 0; tt < NT; ++tt) {
      double g = a * tv[tt];
      for (std::size_t j = 0; j <= J; ++j) {
        feat[tt * (J + 1) + j] = g;
        g *= v;
      }
    }
  }

  void advance(Cursor& cu, std::size_t target, double centre, double* feat) const {
    const std::size_t n = P.n, len = F * C;
    double* prod = feat + F;  // feat holds F features, then the F x C products
    for (std::size_t i = cu.pos; i < target; ++i) {
      if (!(as[i] > 0.0)) continue;
      ++cu.positive;
      point_features(i, centre, feat);
      const double* x = feat;
      if (C > 1) {  // products feat_f * y_c, channel-fastest (as the sums)
        for (std::size_t f = 0; f < F; ++f) {
          prod[f * C] = feat[f];
          for (std::size_t c = 1; c < C; ++c) prod[f * C + c] = feat[f] * ys[(c - 1) * n + i];
        }
        x = prod;
      }
      double* sp = cu.s.data();
      double* ep = cu.e.data();
      for (std::size_t k = 0; k < len; ++k) {
        const double s = sp[k];
        const double t = s + x[k];
        const double z = t - s;
        ep[k] += (s - (t - z)) + (x[k] - z);  // TwoSum error
        sp[k] = t;
      }
    }
    if (target > cu.pos) cu.pos = target;
  }

  // W -= features of sorted point i.
  void sub_point(std::size_t i, double centre, double* feat, double* W) const {
    if (!(as[i] > 0.0)) return;
    point_features(i, centre, feat);
    for (std::size_t f = 0; f < F; ++f) {
      W[f * C] -= feat[f];
      for (std::size_t c = 1; c < C; ++c) W[f * C + c] -= feat[f] * ys[(c - 1) * P.n + i];
    }
  }

  static void add_diff(const Cursor& a, const Cursor& b, double* W, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i) W[i] += (b.s[i] - a.s[i]) + (b.e[i] - a.e[i]);
  }

  struct Scratch {
    Cursor lo, mid, hi;
    std::vector<double> feat, W[2], U[3], B, M, D;
  };

  // -u k'(u) (or k(u)) from the form's terms on the side of u.
  double eval_terms(const std::vector<Term>& terms, double u) const {
    double r = 0.0;
    for (const Term& tm : terms) {
      double p = 0.0;
      for (int e = tm.deg; e >= 0; --e) p = p * u + tm.c[e];
      if (tm.tau == 1) p *= std::cos(kHalfPi * u);
      if (tm.tau == 2) p *= std::sin(kHalfPi * u);
      r += p;
    }
    return r;
  }

  // Direct moments of sorted window [lo, hi) without sorted position `skip`.
  void direct(Scratch& S, std::size_t lo, std::size_t hi, std::size_t skip, double t) const {
    const Kernel K(P.kernel);
    const std::size_t n = P.n;
    std::fill(S.M.begin(), S.M.end(), 0.0);
    std::fill(S.D.begin(), S.D.end(), 0.0);
    for (std::size_t i = lo; i < hi; ++i) {
      if (i == skip || !(as[i] > 0.0)) continue;
      const double u = xs[i] - t;
      const double w = as[i] * K.shape(u);
      const double dw = P.derivative ? as[i] * eval_terms(form.d[u < 0.0 ? 0 : 1], u) : 0.0;
      double ur = 1.0;
      for (std::size_t r = 0; r <= R; ++r) {
        for (std::size_t c = 0; c < C; ++c) {
          const double yc = c == 0 ? 1.0 : ys[(c - 1) * n + i];
          S.M[r * C + c] += w * ur * yc;
          S.D[r * C + c] += dw * ur * yc;
        }
        ur *= u;
      }
    }
  }

  // Moments of one query from the window sums W[side] (F x C).
  void moments(Scratch& S, double s_rel, bool split) const {
    const std::size_t N = J + 1;
    // B[n][j] = C(n, j) (-s)^(n - j): (v - s)^n = sum_j B[n][j] v^j.
    double msp[kMaxPow + 1];
    msp[0] = 1.0;
    for (std::size_t j = 1; j < N; ++j) msp[j] = msp[j - 1] * (-s_rel);
    double* B = S.B.data();
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t j = 0; j <= n; ++j) B[n * N + j] = binom[n * N + j] * msp[n - j];
    const double cb = form.trig ? std::cos(kHalfPi * s_rel) : 1.0;
    const double sb = form.trig ? std::sin(kHalfPi * s_rel) : 0.0;
    std::fill(S.M.begin(), S.M.end(), 0.0);
    std::fill(S.D.begin(), S.D.end(), 0.0);
    const int n_sides = split ? 2 : 1;
    for (int side = 0; side < n_sides; ++side) {
      const double* W = S.W[side].data();
      // V[tt][n][c] = sum a tv(pi v / 2) u^n y_c.
      double* V = S.U[2].data();
      for (std::size_t tt = 0; tt < NT; ++tt)
        for (std::size_t n = 0; n < N; ++n)
          for (std::size_t c = 0; c < C; ++c) {
            double acc = 0.0;
            for (std::size_t j = 0; j <= n; ++j) acc += B[n * N + j] * W[(tt * N + j) * C + c];
            V[(tt * N + n) * C + c] = acc;
          }
      // U[tau][n][c] = sum a tau(pi u / 2) u^n y_c (tau 0: 1; 1: cos; 2: sin).
      const double* Ut[3];
      if (!form.trig) {
        Ut[0] = V;
        Ut[1] = Ut[2] = nullptr;
      } else {
        double* Uc = S.U[0].data();
        double* Us = S.U[1].data();
        const double* Vc = V;
        const double* Vs = V + N * C;
        for (std::size_t i = 0; i < N * C; ++i) {
          Uc[i] = cb * Vc[i] + sb * Vs[i];  // cos(a - b) = cos a cos b + sin a sin b
          Us[i] = cb * Vs[i] - sb * Vc[i];  // sin(a - b) = sin a cos b - cos a sin b
        }
        Ut[0] = nullptr;
        Ut[1] = Uc;
        Ut[2] = Us;
      }
      const int fs = split ? side : 1;  // form side (unsplit kernels: same both sides)
      auto apply = [&](const std::vector<Term>& terms, double* out) {
        for (const Term& tm : terms) {
          const double* U = Ut[tm.tau];
          for (std::size_t r = 0; r <= R; ++r)
            for (int e = 0; e <= tm.deg; ++e) {
              const double ce = tm.c[e];
              if (ce == 0.0) continue;
              const double* Un = U + (static_cast<std::size_t>(e) + r) * C;
              for (std::size_t c = 0; c < C; ++c) out[r * C + c] += ce * Un[c];
            }
        }
      };
      apply(form.w[fs], S.M.data());
      if (P.derivative) apply(form.d[fs], S.D.data());
    }
  }

  // The queries in sorted order, qo, by (t, sorted position of the own row) so every pointer
  // only advances; sp: the sorted position of each query's own row (-1: none).
  void order_queries(std::vector<std::size_t>& qo, std::vector<std::int64_t>& sp) const {
    const std::size_t m = P.m;
    qo.resize(m);
    sp.assign(m, -1);
    for (std::size_t q = 0; q < m; ++q) {
      qo[q] = q;
      if (P.self && P.self[q] >= 0) sp[q] = static_cast<std::int64_t>(rank[static_cast<std::size_t>(P.self[q])]);
    }
    auto before = [&](std::size_t a, std::size_t b) {
      if (P.t[a] != P.t[b]) return P.t[a] < P.t[b];
      return sp[a] < sp[b];
    };
    // Training rows as queries (each naming its own row, at its own x): the sorted order is
    // the rank of the own row, found in O(m) instead of by a comparison sort.
    bool by_rank = P.self != nullptr && m == P.n;
    if (by_rank) {
      std::vector<std::size_t> inv(m, m);
      for (std::size_t q = 0; q < m && by_rank; ++q) {
        const std::int64_t r = sp[q];
        by_rank = r >= 0 && P.t[q] == xs[static_cast<std::size_t>(r)] &&
                  inv[static_cast<std::size_t>(r)] == m;
        if (by_rank) inv[static_cast<std::size_t>(r)] = q;
      }
      if (by_rank) qo.swap(inv);
    }
    if (!by_rank && !std::is_sorted(qo.begin(), qo.end(), before))
      std::stable_sort(qo.begin(), qo.end(), before);
  }

  // Blocks of sorted queries [b_k, b_k+1). Each query's reach is the half-width of its window:
  // the largest |x_i - t| in it (0 when empty). The queries are sorted, so both window ends
  // only advance: one sweep, O(n + m) (the same indices as first_in / first_out, whose
  // predicates are monotone along the sorted x). A block spans at most one bandwidth and at
  // most the reach of each of its queries, so that |t - centre| <= reach / 2: the binomial
  // shift never meets cancellation beyond the window's own scale, and a window of ties at t
  // (reach 0) is centred at t exactly.
  std::vector<std::size_t> make_blocks(const std::vector<std::size_t>& qo) const {
    const std::size_t m = P.m, n = P.n;
    std::vector<double> reach(m, 0.0);
    std::size_t lo = 0, hi = 0;
    for (std::size_t qq = 0; qq < m; ++qq) {
      const double t = P.t[qo[qq]];
      while (lo < n && !left_in(lo, t)) ++lo;
      if (hi < lo) hi = lo;
      while (hi < n && !right_out(hi, t)) ++hi;
      if (hi > lo) reach[qq] = std::max(t - xs[lo], xs[hi - 1] - t);
    }
    std::vector<std::size_t> bstart;
    for (std::size_t i = 0; i < m;) {
      bstart.push_back(i);
      const double t0 = P.t[qo[i]];
      double lim = std::min(1.0, reach[i]);
      ++i;
      while (i < m) {
        const double l = std::min(lim, reach[i]);
        if (!(P.t[qo[i]] - t0 <= l)) break;
        lim = l;
        ++i;
      }
    }
    bstart.push_back(m);
    return bstart;
  }

  // Hands one query's moments to the consumer.
  void emit(Scratch& S, FastMomentsConsumer& consumer, std::size_t q, std::size_t positive) const {
    FastMomentsQuery out;
    out.query = q;
    out.M = S.M.data();
    out.D = P.derivative ? S.D.data() : nullptr;
    out.positive = positive;
    consumer.query(out);
  }

  // The queries qo[q0, q1) of one block: running sums restarted at the block's first window,
  // features centred at the block's midpoint.
  void run_block(Scratch& S, FastMomentsConsumer& consumer, const std::vector<std::size_t>& qo,
                 const std::vector<std::int64_t>& sp, std::size_t q0, std::size_t q1) const {
    const std::size_t n = P.n, len = F * C;
    const bool split = form.split;
    const double t0 = P.t[qo[q0]];
    const double centre = 0.5 * (t0 + P.t[qo[q1 - 1]]);
    const std::size_t lo0 = first_in(t0);  // first point of the first window
    reset(S.lo, lo0);
    reset(S.mid, lo0);
    reset(S.hi, lo0);
    double* feat = S.feat.data();
    for (std::size_t qq = q0; qq < q1; ++qq) {
      const std::size_t q = qo[qq];
      const double t = P.t[q];
      std::size_t p = S.lo.pos;
      while (p < n && !left_in(p, t)) ++p;
      advance(S.lo, p, centre, feat);
      p = std::max(S.hi.pos, S.lo.pos);
      while (p < n && !right_out(p, t)) ++p;
      advance(S.hi, p, centre, feat);
      const std::size_t lo = S.lo.pos, hi = S.hi.pos;
      if (split) {
        p = std::max(S.mid.pos, lo);
        while (p < hi && xs[p] - t < 0.0) ++p;
        advance(S.mid, p, centre, feat);
      }
      const std::size_t own = sp[q] >= 0 ? static_cast<std::size_t>(sp[q]) : n;
      const bool own_in = own >= lo && own < hi;
      if (hi - lo <= kDirectWindow) {
        // A small window: its direct sum costs no more than the expansion, and it decides
        // borderline cases (a near-singular local design from two or three points, one of
        // them at the edge of the support) on the same numbers as the all-pairs path.
        direct(S, lo, hi, own_in ? own : n, t);
        std::size_t positive = 0;
        for (std::size_t i = lo; i < hi; ++i)
          if (i != own && as[i] > 0.0) ++positive;
        emit(S, consumer, q, positive);
        continue;
      }
      std::fill(S.W[0].begin(), S.W[0].end(), 0.0);
      std::fill(S.W[1].begin(), S.W[1].end(), 0.0);
      std::size_t positive = S.hi.positive - S.lo.positive;
      if (own_in && as[own] > 0.0) --positive;
      // Segments: [lo, hi) as one side, or [lo, mid) left and [mid, hi) right; the own
      // row's features are subtracted from its segment (the window holds more than
      // kDirectWindow points, so its feature sums are not dominated by the own row's).
      auto segment = [&](const Cursor& a, const Cursor& b, double* W) {
        add_diff(a, b, W, len);
        if (own_in && own >= a.pos && own < b.pos) sub_point(own, centre, feat, W);
      };
      if (split) {
        segment(S.lo, S.mid, S.W[0].data());
        segment(S.mid, S.hi, S.W[1].data());
      } else {
        segment(S.lo, S.hi, S.W[0].data());
      }
      moments(S, t - centre, split);
      emit(S, consumer, q, positive);
    }
  }

  void run(const std::function<std::unique_ptr<FastMomentsConsumer>()>& make_consumer) {
    std::vector<std::size_t> qo;
    std::vector<std::int64_t> sp;
    order_queries(qo, sp);
    const std::vector<std::size_t> bstart = make_blocks(qo);
    const std::size_t nb = bstart.size() - 1;
    int nt = P.n_threads;
#ifdef _OPENMP
    if (nt <= 0) nt = omp_get_max_threads();
#else
    nt = 1;
#endif
    if (nt > static_cast<int>(nb)) nt = std::max<int>(1, static_cast<int>(nb));
    if (P.n + P.m < 4096) nt = 1;  // thread start-up costs more than the work
#pragma omp parallel num_threads(nt)
    {
      std::unique_ptr<FastMomentsConsumer> consumer = make_consumer();
      Scratch S;
      S.feat.resize(F + F * C);
      S.W[0].resize(F * C);
      S.W[1].resize(F * C);
      for (auto& u : S.U) u.resize(NT * (J + 1) * C);
      S.B.resize((J + 1) * (J + 1));
      S.M.resize((R + 1) * C);
      S.D.resize((R + 1) * C);
#pragma omp for schedule(dynamic, 1)
      for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(nb); ++b)
        run_block(S, *consumer, qo, sp, bstart[b], bstart[b + 1]);
      consumer->finish();
    }
  }
};

}  // namespace

bool fast_sums_supported(KernelType kernel) {
  return dispatch_kernel(kernel, [](auto k) { return decltype(k)::has_fast_sums; });
}

bool fast_sums_eligible(const KernelSpace& space, int degree) {
  if (space.n_continuous() != 1 || space.n_categorical() != 0) return false;
  if (!fast_sums_supported(space.spec().kernel.type)) return false;
  // Degree 2 and 3: the high moments of a narrow window lose digits to the binomial shift,
  // which the ill-conditioned local design amplifies beyond 1e-10; they keep the pair loop.
  if (degree < 0 || degree > 1) return false;
  if (space.spec().algorithm != PairAlgorithm::automatic) return false;
  if (space.n() < kFastSumsMinRows) return false;
  const arma::vec& ow = space.obs_weights();
  for (std::size_t i = 0; i < ow.n_elem; ++i)
    if (ow(i) > 0.0 && ow(i) < 1e-200) return false;
  return true;
}

void fast_window_moments(const FastMomentsProblem& problem,
                         const std::function<std::unique_ptr<FastMomentsConsumer>()>& make_consumer) {
  check::require(fast_sums_supported(problem.kernel), "kernel", "fast sums need a compact kernel");
  check::require(problem.max_power >= 0, "max_power", "must be >= 0");
  if (problem.m == 0) return;
  Engine e(problem);
  e.run(make_consumer);
}

}  // namespace attnreg
