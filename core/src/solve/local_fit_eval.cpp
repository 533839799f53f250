#include "attnreg/solve/local_fit.hpp"
#include "attnreg/kernels/fast_sums.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/fast_moment_feeder.hpp"
#include "attnreg/detail/local_fit_internal.hpp"
#include "attnreg/moments/local_moments.hpp"

namespace attnreg {

namespace local_fit_detail {

namespace {

QueryStatus weight_status(double row_max) {
  if (!(row_max > 0.0)) return QueryStatus::no_weight;
  if (row_max < KernelSpace::kTinyWeight) return QueryStatus::underflow;
  return QueryStatus::ok;
}

// The system for moments (A, T) of q terms and k outputs plus the ridge lambda * omega *
// penalty: writes [A^{-1} e1, A^{-1} T] into R (q x (1 + k), row-major, scratch Af, L, s).
// False when singular.
bool solve_moments(const double* A, const double* T, std::size_t q, std::size_t k, double ridge,
                   const double* penalty, double* R, double* Af, double* L, double* s) {
  const std::size_t r = 1 + k;
  for (std::size_t i = 0; i < q; ++i) {
    R[i * r] = i == 0 ? 1.0 : 0.0;
    for (std::size_t o = 0; o < k; ++o) R[i * r + 1 + o] = T[i * k + o];
  }
  return local_solve::ridge_spd_solve(A, q, ridge, penalty, R, r, Af, L, s) ==
         local_solve::SolveStatus::ok;
}

// ---------------------------------------------------------------- the moments sink
class MomentSink final : public TileSink {
 public:
  MomentSink(const KernelSpace& space, const arma::mat& Y, const LocalPolySpec& spec,
             const PreparedQueries& Q, const LocalEvalRequest& req, LocalEvalResult& out,
             const std::vector<double>& penalty)
      : space_(space), Y_(Y), spec_(spec), Q_(Q), req_(req), out_(out), pen_(penalty) {
    p_ = LocalPolySpec::n_terms(spec.degree, space.n_continuous());
    q_ = p_ + 1;
    k_ = Y.n_cols;
    // Per slot one query's LocalMoments row: A (q x q) then T (q x k).
    block_ = moments::LocalMoments::empty(
        KernelSpace::kBlock,
        moments::MomentLayout::full_storage(static_cast<int>(p_), static_cast<int>(k_)), false);
    basis_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    wb_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    ones_.assign(KernelSpace::kTile, 1.0);
    zeros_.assign(KernelSpace::kTile, 0.0);
    bptr_.resize(std::max<std::size_t>(p_, 1));
    yptr_.resize(k_);
    cols_.resize(2 * (q_ + k_) + 8);
    Af_.resize(q_ * q_);
    R_.resize(q_ * (1 + k_));
    L_.resize(q_ * q_);
    s_.resize(q_);
  }

  void begin_block(const std::size_t* queries, std::size_t count) override {
    qs_ = queries;
    count_ = count;
    std::fill(block_.row(0), block_.row(static_cast<std::int64_t>(count)), 0.0);
  }

  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    for (std::size_t o = 0; o < k_; ++o) yptr_[o] = Y_.colptr(o) + first;
    if (spec_.degree <= 1) {
      const arma::mat& xs = space_.scaled();
      for (std::size_t a = 0; a < p_ && a < 3; ++a) xptr_[a] = xs.colptr(a) + first;
      if (fused_linear_dispatch(p_, k_, w, xptr_, Q_.cont.colptr(qs_[slot]), yptr_.data(), len,
                                A_of(slot), T_of(slot)))
        return;
    }
    // Sub-chunks small enough that the basis columns and w * basis stay in L1.
    const std::size_t chunk = p_ <= 2 ? len : std::max<std::size_t>(64, 2048 / p_ / 8 * 8);
    for (std::size_t c0 = 0; c0 < len; c0 += chunk) {
      const std::size_t cl = std::min(chunk, len - c0);
      build_basis(space_, Q_, qs_[slot], spec_.degree, first + c0, cl, basis_.data(), bptr_.data());
      for (std::size_t o = 0; o < k_; ++o) yptr_[o] = Y_.colptr(o) + first + c0;
      MomentTile t;
      t.w = w + c0;
      t.len = cl;
      t.basis = bptr_.data();
      t.p = p_;
      t.y = yptr_.data();
      t.k = k_;
      t.ones = ones_.data();
      t.zeros = zeros_.data();
      t.A = A_of(slot);
      t.T = T_of(slot);
      t.wb = wb_.data();
      t.cols = cols_.data();
      accumulate_moments(t);
    }
  }

  void end_block(const double* row_max) override {
    for (std::size_t s = 0; s < count_; ++s) finish(s, row_max[s]);
  }

  /// Moments of `slot` computed elsewhere (fast sums): one row of layout() (A then T).
  void set_moments(std::size_t slot, const double* row) {
    std::copy(row, row + block_.layout.n_stats(), block_.row(static_cast<std::int64_t>(slot)));
  }
  const moments::MomentLayout& layout() const { return block_.layout; }

 private:
  double* A_of(std::size_t slot) { return block_.row(static_cast<std::int64_t>(slot)); }
  double* T_of(std::size_t slot) { return A_of(slot) + q_ * q_; }

  // Solve the system for moments (A, T) plus the ridge lambda * omega * penalty. Writes the
  // solution [A^{-1} e1, A^{-1} T] into R_ (q x (1 + k), row-major). False when singular.
  bool solve(const double* A, const double* T) {
    return solve_moments(A, T, q_, k_, spec_.ridge, pen_.data(), R_.data(), Af_.data(),
                         L_.data(), s_.data());
  }

  void finish(std::size_t s, double row_max) {
    const std::size_t qi = qs_[s];
    double* A = A_of(s);
    double* T = T_of(s);
    const std::size_t r = 1 + k_;
    const std::int64_t self =
        (req_.loo || (req_.moments && !Q_.self.empty())) ? Q_.self[qi] : -1;

    // Raw moments for partials (partials.hpp): the sums as accumulated (own row excluded).
    if (req_.moments) {
      std::copy(A, A + q_ * q_, out_.moment_A.colptr(qi));
      std::copy(T, T + q_ * k_, out_.moment_T.colptr(qi));
      out_.moment_max(qi) = row_max;
      if (!(req_.fit || req_.coefficients || req_.gradient || req_.loo)) return;
    }

    // Leave-one-out first: the accumulated sums exclude the query's own row.
    if (self >= 0 && req_.loo) {
      QueryStatus st = weight_status(row_max);
      if (st == QueryStatus::ok && !solve(A, T)) st = QueryStatus::singular;
      out_.loo_status[qi] = st;
      for (std::size_t o = 0; o < k_; ++o) out_.loo(qi, o) = st == QueryStatus::ok ? R_[1 + o] : kNaN;
    }

    // Full fit: add the own row back (its basis is 0, so only A_00 and T_0 change).
    double w_self = 0.0;
    if (self >= 0) {
      const auto k = static_cast<std::size_t>(self);
      w_self = space_.self_weight(k);
      A[0] += w_self;
      for (std::size_t o = 0; o < k_; ++o) T[o] += w_self * Y_(k, o);
      row_max = std::max(row_max, w_self);
    }
    QueryStatus st = weight_status(row_max);
    if (st == QueryStatus::ok && !solve(A, T)) st = QueryStatus::singular;
    out_.status[qi] = st;
    const bool ok = st == QueryStatus::ok;
    if (req_.fit)
      for (std::size_t o = 0; o < k_; ++o) out_.fit(qi, o) = ok ? R_[1 + o] : kNaN;
    if (req_.coefficients)
      for (std::size_t a = 0; a < q_; ++a) out_.coefficients(a, qi) = ok ? R_[a * r] : kNaN;
    if (req_.loo && self >= 0) out_.leverage(qi) = ok ? w_self * R_[0] : kNaN;
    if (req_.solution)
      for (std::size_t a = 0; a < q_; ++a)
        for (std::size_t o = 0; o < k_; ++o)
          out_.solution(qi, a, o) = ok ? R_[a * r + 1 + o] : kNaN;
    if (req_.gradient) {
      // Slopes in bandwidth units divided by h give d m / d x in data units (the first
      // n_continuous basis terms are the linear ones for every degree >= 1).
      const auto& cc = space_.continuous_columns();
      const std::size_t n_grad = cc.size();
      for (std::size_t a = 0; a < n_grad; ++a) {
        const std::size_t col = cc[a];
        const double h = space_.bandwidth()(col);
        for (std::size_t o = 0; o < k_; ++o)
          out_.gradient(qi, col, o) = ok ? R_[(1 + a) * r + 1 + o] / h : kNaN;
      }
    }
  }

  const KernelSpace& space_;
  const arma::mat& Y_;
  const LocalPolySpec& spec_;
  const PreparedQueries& Q_;
  const LocalEvalRequest& req_;
  LocalEvalResult& out_;
  const std::vector<double>& pen_;
  std::size_t p_ = 0, q_ = 1, k_ = 1;
  const std::size_t* qs_ = nullptr;
  std::size_t count_ = 0;
  moments::LocalMoments block_;  // the block's moments, one row per slot
  std::vector<double> basis_, wb_, ones_, zeros_, Af_, R_, L_, s_;
  std::vector<const double*> bptr_, yptr_, cols_;
  const double* xptr_[3] = {nullptr, nullptr, nullptr};
};

// ---------------------------------------------------------------- the weights sinks
// l_i(x) = w_i (c_0 + sum_a c_a z_ia) with c = A^{-1} e1 over each tile, handed to Store with
// the tile's original rows: WriteWeights stores them in W(q, row), SumSquaredWeights adds
// sum_i f_i l_i(x)^2 to out(q) without forming W (tr(L'L): the dense m x G block cost more in
// memory traffic than the weights themselves). Every query's tiles come from one thread in a
// fixed order (kernel_pairs.hpp), so out(q) is the same for any thread count.
struct WriteWeights {
  arma::mat& W;
  void operator()(std::size_t qi, const std::size_t* rows, std::size_t len, const double* w,
                  const double* l) const {
    for (std::size_t i = 0; i < len; ++i) W(qi, rows[i]) = w[i] * l[i];
  }
};

struct SumSquaredWeights {
  const arma::vec& f;
  arma::vec& out;
  void operator()(std::size_t qi, const std::size_t* rows, std::size_t len, const double* w,
                  const double* l) const {
    double s = 0.0;
    for (std::size_t i = 0; i < len; ++i) {
      const double v = w[i] * l[i];
      s += f(rows[i]) * v * v;
    }
    out(qi) += s;
  }
};

template <class Store>
class WeightSink final : public TileSink {
 public:
  WeightSink(const KernelSpace& space, const PreparedQueries& Q, int degree,
             const arma::mat& coef, Store store)
      : space_(space), Q_(Q), degree_(degree), coef_(coef), store_(store) {
    p_ = LocalPolySpec::n_terms(degree, space.n_continuous());
    basis_.resize(std::max<std::size_t>(p_, 1) * KernelSpace::kTile);
    bptr_.resize(std::max<std::size_t>(p_, 1));
    l_.resize(KernelSpace::kTile);
  }
  void begin_block(const std::size_t* queries, std::size_t) override { qs_ = queries; }
  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    const std::size_t qi = qs_[slot];
    build_basis(space_, Q_, qi, degree_, first, len, basis_.data(), bptr_.data());
    const double c0 = coef_(0, qi);
    for (std::size_t i = 0; i < len; ++i) l_[i] = c0;
    for (std::size_t a = 0; a < p_; ++a) {
      const double ca = coef_(1 + a, qi);
      const double* b = bptr_[a];
      for (std::size_t i = 0; i < len; ++i) l_[i] += ca * b[i];
    }
    store_(qi, space_.order().data() + first, len, w, l_.data());
  }
  void end_block(const double*) override {}

 private:
  const KernelSpace& space_;
  const PreparedQueries& Q_;
  int degree_;
  const arma::mat& coef_;
  Store store_;
  std::size_t p_ = 0;
  const std::size_t* qs_ = nullptr;
  std::vector<double> basis_, l_;
  std::vector<const double*> bptr_;
};

// Feeds fast-sum moments (fast_sums.hpp) to a MomentSink in blocks of KernelSpace::kBlock.
class FastMomentFeeder final : public detail::BlockedMomentFeeder<MomentSink> {
 public:
  FastMomentFeeder(const KernelSpace& space, const arma::mat& Y, const LocalPolySpec& spec,
                   const PreparedQueries& Q, const LocalEvalRequest& req, LocalEvalResult& out,
                   const std::vector<double>& penalty)
      : BlockedMomentFeeder<MomentSink>(space, Y, spec, Q, req, out, penalty),
        q_(1 + LocalPolySpec::n_terms(spec.degree, 1)),
        k_(Y.n_cols) {}
  void query(const FastMomentsQuery& fq) override {
    const std::size_t C = 1 + k_;
    // A[a][b] = sum w u^(a+b), T[a][o] = sum w u^a y_o (basis u, ..., u^p in bandwidth units).
    double* A = next_row();
    double* T = A + q_ * q_;
    for (std::size_t a = 0; a < q_; ++a) {
      for (std::size_t b = 0; b < q_; ++b) A[a * q_ + b] = fq.M[(a + b) * C];
      for (std::size_t o = 0; o < k_; ++o) T[a * k_ + o] = fq.M[a * C + 1 + o];
    }
    commit(fq);
  }

 private:
  std::size_t q_, k_;
};

}  // namespace

std::unique_ptr<TileSink> make_weight_sink(const KernelSpace& space, const PreparedQueries& Q,
                                           int degree, const arma::mat& coef, arma::mat& W) {
  return std::unique_ptr<TileSink>(
      new WeightSink<WriteWeights>(space, Q, degree, coef, WriteWeights{W}));
}

std::unique_ptr<TileSink> make_squared_weight_sink(const KernelSpace& space,
                                                   const PreparedQueries& Q, int degree,
                                                   const arma::mat& coef, const arma::vec& f,
                                                   arma::vec& out) {
  return std::unique_ptr<TileSink>(
      new WeightSink<SumSquaredWeights>(space, Q, degree, coef, SumSquaredWeights{f, out}));
}

std::vector<double> penalty_scales(const KernelSpace& space, int degree) {
  const auto& cc = space.continuous_columns();
  arma::vec h(cc.size());
  for (std::size_t a = 0; a < cc.size(); ++a) h(a) = space.bandwidth()(cc[a]);
  return local_penalty_scales(h, degree);
}

const char* degree_name(int degree) {
  switch (degree) {
    case 0: return "local constant";
    case 1: return "local linear";
    case 2: return "local quadratic";
    default: return "local cubic";
  }
}

}  // namespace local_fit_detail

using namespace local_fit_detail;

std::vector<double> local_penalty_scales(const arma::vec& h, int degree) {
  // Ridge on the slopes in data units: lambda * omega * sum_a beta_a^2. In bandwidth units the
  // coefficient of (x_a / h_a)^e is beta h^e, so the penalty weight is h^(-2e).
  std::vector<double> pen;
  if (degree == 1 || (degree == 2 && h.n_elem > 1)) {
    for (std::size_t a = 0; a < h.n_elem; ++a) pen.push_back(1.0 / (h(a) * h(a)));
    if (degree == 2)  // products z_a z_b: coefficient beta h_a h_b
      for (std::size_t a = 0; a < h.n_elem; ++a)
        for (std::size_t c = a; c < h.n_elem; ++c) pen.push_back(1.0 / (h(a) * h(a) * h(c) * h(c)));
  } else if (degree >= 2 && h.n_elem >= 1) {
    for (int e = 1; e <= degree; ++e) pen.push_back(std::pow(h(0), -2.0 * e));
  }
  return pen;
}

void local_polynomial_solve(const arma::mat& A, const arma::mat& T, const arma::vec& row_max,
                            std::size_t k, double ridge, const std::vector<double>& penalty,
                            arma::mat& fit, std::vector<QueryStatus>& status) {
  const std::size_t q = penalty.size() + 1, m = A.n_cols;
  check::require(A.n_rows == q * q && T.n_rows == q * k && T.n_cols == m && row_max.n_elem == m,
                 "partial", "moments of inconsistent shape (merge partials of the same fit)");
  fit.set_size(m, k);
  status.assign(m, QueryStatus::ok);
  std::vector<double> Af(q * q), R(q * (1 + k)), L(q * q), sc(q);
  for (std::size_t qi = 0; qi < m; ++qi) {
    QueryStatus st = weight_status(row_max(qi));
    // As MomentSink::solve: the omega-scaled ridge, then the equilibrated solve.
    if (st == QueryStatus::ok &&
        !solve_moments(A.colptr(qi), T.colptr(qi), q, k, ridge, penalty.data(), R.data(),
                       Af.data(), L.data(), sc.data()))
      st = QueryStatus::singular;
    status[qi] = st;
    for (std::size_t o = 0; o < k; ++o) fit(qi, o) = st == QueryStatus::ok ? R[1 + o] : kNaN;
  }
}

LocalEvalResult local_polynomial_eval(const KernelSpace& space, const arma::mat& Y_internal,
                                      const LocalPolySpec& spec, const PreparedQueries& Q,
                                      const LocalEvalRequest& request, int n_threads) {
  check::require(spec.degree >= 0 && spec.degree <= 3, "degree", "must be 0, 1, 2 or 3");
  check::require(spec.degree <= 1 || (spec.degree == 2 && space.n_continuous() >= 1) ||
                     space.n_continuous() == 1,
                 "degree",
                 "degree 2 needs a continuous column and degree 3 exactly one (use degree 1 or 2 "
                 "for several)");
  check::require(std::isfinite(spec.ridge) && spec.ridge >= 0.0, "ridge",
                 "must be >= 0 and finite");
  check::require(!request.gradient || spec.degree >= 1, "gradient",
                 "needs degree >= 1 (a local constant fit has no slope; use local linear)");
  check::require(Y_internal.n_rows == space.n(), "Y_internal", "must have one row per training row");
  check::require(!request.loo || Q.self.size() == Q.m, "queries",
                 "leave-one-out needs the training rows as queries (training_queries())");
  const std::size_t m = Q.m, k = Y_internal.n_cols;
  const std::size_t q = 1 + LocalPolySpec::n_terms(spec.degree, space.n_continuous());
  LocalEvalResult out;
  out.status.assign(m, QueryStatus::ok);
  if (request.fit) out.fit.set_size(m, k);
  if (request.gradient) out.gradient.set_size(m, space.dim(), k);
  if (request.gradient) out.gradient.fill(kNaN);
  if (request.coefficients) out.coefficients.set_size(q, m);
  if (request.solution) out.solution.set_size(m, q, k);
  if (request.moments) {
    out.moment_A.zeros(q * q, m);
    out.moment_T.zeros(q * k, m);
    out.moment_max.zeros(m);
  }
  if (request.loo) {
    out.leverage.set_size(m);
    out.loo.set_size(m, k);
    out.loo_status.assign(m, QueryStatus::ok);
  }
  const std::vector<double> pen = penalty_scales(space, spec.degree);
  if (!request.moments && fast_sums_eligible(space, spec.degree)) {
    // 1-D compact kernel: exact fast sums over sorted windows (fast_sums.hpp).
    FastMomentsProblem fp;
    fp.kernel = space.spec().kernel.type;
    fp.n = space.n();
    fp.x = space.scaled().colptr(0);
    fp.a = space.obs_weights().is_empty() ? nullptr : space.obs_weights().memptr();
    fp.Y = Y_internal.memptr();
    fp.k = k;
    fp.m = m;
    fp.t = Q.cont.memptr();
    fp.self = request.loo ? Q.self.data() : nullptr;
    fp.max_power = static_cast<int>(2 * (q - 1));
    fp.n_threads = n_threads;
    fast_window_moments(fp, [&]() {
      return std::unique_ptr<FastMomentsConsumer>(
          new FastMomentFeeder(space, Y_internal, spec, Q, request, out, pen));
    });
    return out;
  }
  RunOptions ro;
  ro.n_threads = n_threads;
  ro.exclude_self = request.loo || (request.moments && Q.self.size() == Q.m && Q.m > 0);
  ro.label = degree_name(spec.degree);
  space.run(
      Q,
      [&]() {
        return std::unique_ptr<TileSink>(
            new MomentSink(space, Y_internal, spec, Q, request, out, pen));
      },
      ro);
  return out;
}

void throw_on_failed_query(const std::vector<QueryStatus>& status, const KernelSpace& space,
                           int degree, double ridge, const std::string& arg, bool leave_one_out) {
  throw_on_failed_query(status, space.spec().kernel, space.n_continuous(), space.n_categorical(),
                        degree, ridge, arg, leave_one_out);
}

void throw_on_failed_query(const std::vector<QueryStatus>& status, const Kernel& kernel,
                           std::size_t n_continuous, std::size_t n_categorical, int degree,
                           double ridge, const std::string& arg, bool leave_one_out) {
  std::size_t bad = status.size();
  for (std::size_t i = 0; i < status.size(); ++i)
    if (status[i] != QueryStatus::ok) {
      bad = i;
      break;
    }
  if (bad == status.size()) return;
  std::size_t count = 0;
  for (QueryStatus s : status) count += s != QueryStatus::ok;
  std::ostringstream msg;
  if (leave_one_out)
    msg << "leave-one-out fit at training row " << (bad + 1) << ": ";
  else
    msg << arg << " row " << (bad + 1) << ": ";
  switch (status[bad]) {
    case QueryStatus::no_weight:
    case QueryStatus::underflow: {
      const bool compact = kernel.compact() && n_continuous > 0;
      const char* other = leave_one_out ? " other than the row itself" : "";
      if (compact) {
        msg << "no training point" << other << " has a positive kernel weight (the "
            << kernel.name()
            << " kernel is zero beyond one bandwidth in any continuous column)";
      } else if (n_continuous > 0) {
        msg << "every kernel weight" << (status[bad] == QueryStatus::underflow ? " underflows" : " is 0 or underflows")
            << " in double precision (the nearest training point" << other
            << " is more than about 36 bandwidths away in the Gaussian metric)";
      } else {
        msg << "no training point" << other << " has a positive kernel weight";
      }
      if (n_categorical > 0)
        msg << "; categorical lambdas of 0 also give weight 0 to every other level";
      msg << "; increase the bandwidth or drop the point";
      break;
    }
    case QueryStatus::singular:
      msg << "the " << degree_name(degree) << " design is singular: the training points with "
          << "positive weight do not determine the " << (1 + LocalPolySpec::n_terms(degree, n_continuous))
          << " local coefficients (too few distinct neighbours"
          << (leave_one_out ? " once the row itself is left out" : "")
          << ", or a column constant among them); increase the bandwidth"
          << (ridge > 0.0 ? "" : ", set ridge > 0") << " or lower the degree";
      break;
    case QueryStatus::ok: break;
  }
  if (count > 1) msg << " [" << count << " of " << status.size() << " rows fail]";
  throw NumericalError(msg.str());
}

}  // namespace attnreg
