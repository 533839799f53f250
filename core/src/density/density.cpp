#include "attnreg/density/density.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "attnreg/detail/density_kernels.hpp"
#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

using density_detail::Column;
using density_detail::ColumnState;
using density_detail::Mode;

DensityMethod density_method_from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
  if (s == "cv_ml" || s == "cv.ml") return DensityMethod::cv_ml;
  if (s == "cv_ls" || s == "cv.ls") return DensityMethod::cv_ls;
  if (s == "normal_reference" || s == "normal-reference" || s == "rot")
    return DensityMethod::normal_reference;
  throw InvalidArgument(arg + ": unknown bandwidth method '" + name +
                        "' (choose cv_ml, cv_ls or normal_reference, or pass numbers)");
}

const char* density_method_name(DensityMethod m) {
  switch (m) {
    case DensityMethod::cv_ml: return "cv_ml";
    case DensityMethod::cv_ls: return "cv_ls";
    case DensityMethod::normal_reference: return "normal_reference";
  }
  return "?";
}

namespace {

bool is_integer(double v) { return std::isfinite(v) && v == std::floor(v); }

const char* kind_name(DensityKind k) {
  switch (k) {
    case DensityKind::density: return "density";
    case DensityKind::conditional_density: return "conditional density";
    case DensityKind::conditional_distribution: return "conditional distribution";
  }
  return "?";
}

}  // namespace

DensityData::DensityData(DensityKind kind, const arma::mat& X, const std::string& x_types,
                         const arma::mat& Y, const std::string& y_types,
                         const DensityOptions& opt)
    : kind_(kind), X_(X), Y_(Y), opt_(opt) {
  check::require(X.n_cols >= 1, "X", "needs at least one column");
  check::require(X.n_rows >= 2, "X",
                 "needs at least 2 rows for a kernel " + std::string(kind_name(kind)) + " (got " +
                     std::to_string(X.n_rows) + ")");
  check::all_finite(X, "X");
  std::vector<VarType> tx = parse_var_types(x_types, X.n_cols, "var_types");
  std::vector<VarType> ty;
  if (kind == DensityKind::density) {
    check::require(Y.n_cols == 0, "y", "the unconditional density takes no y");
  } else {
    check::require(Y.n_cols >= 1 && Y.n_rows == X.n_rows, "y",
                   "needs one row per row of X (got " + std::to_string(Y.n_rows) + " rows, X has " +
                       std::to_string(X.n_rows) + ")");
    check::all_finite(Y, "y");
    ty = parse_var_types(y_types, Y.n_cols, "y_types");
    if (kind == DensityKind::conditional_distribution)
      for (std::size_t j = 0; j < ty.size(); ++j)
        check::require(ty[j] != VarType::unordered, "y_types",
                       "column " + std::to_string(j + 1) +
                           " of y is unordered: a distribution function needs continuous or "
                           "ordered y (declare it ordered, or use a conditional density)");
  }
  types_ = tx;
  types_.insert(types_.end(), ty.begin(), ty.end());
  // The kernel of a column the estimate is a density (or distribution) in must sum to one over
  // the levels: every column of an unconditional density, y's columns of a conditional one. On
  // X's columns of a conditional density, distribution or quantile the kernel enters the ratio
  // f(x, y) / f(x) (and F(y | x)) in numerator and denominator alike, so any normalisation that
  // depends on x cancels and the Li-Racine kernels are accepted there, as in R np's npcdensbw and
  // npcdistbw (Li and Racine 2007, Nonparametric Econometrics, Princeton UP, ch. 5-6; Li, Lin and
  // Racine 2013, J. Bus. Econ. Statist. 31(1)).
  auto needs_sum_to_one = [&](VarType t) {
    if (kind == DensityKind::density)
      for (VarType u : tx)
        if (u == t) return true;
    for (VarType u : ty)
      if (u == t) return true;
    return false;
  };
  auto has = [](const std::vector<VarType>& v, VarType t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  const char* where = kind == DensityKind::density
                          ? "an unconditional density needs a kernel that sums to one over the "
                          : "the response y's kernel must sum to one over the ";
  const char* accepted = kind == DensityKind::density
                             ? ""
                             : "; li_racine is accepted on X's (conditioning) columns";
  if (opt.unordered.type != CategoricalKernelType::aitchison_aitken &&
      needs_sum_to_one(VarType::unordered))
    throw InvalidArgument(std::string("unordered_kernel: ") + where +
                          "levels: use aitchison_aitken for it (li_racine does not sum to one" +
                          accepted + ")");
  // Ordered columns: X's take `ordered` (all columns of an unconditional density), y's take
  // `ordered_y`, so li_racine on the conditioning columns (np's oxkertype default) goes with a
  // kernel that sums to one on the response: li_racine_normalized (what np's okertype =
  // "liracine" means on a density's own column) or wang_van_ryzin (kernel.hpp).
  const char* normalised_alternative =
      "integers: use li_racine_normalized for it (np's okertype = \"liracine\" on a density's "
      "own column, lambda^|d| (1 - lambda) / (1 + lambda)) or wang_van_ryzin (li_racine does "
      "not sum to one";
  if (kind == DensityKind::density && !opt.ordered.sums_to_one() && has(tx, VarType::ordered))
    throw InvalidArgument(std::string("ordered_kernel: ") + where + normalised_alternative + ")");
  if (kind != DensityKind::density && !opt.ordered_y.sums_to_one() && has(ty, VarType::ordered))
    throw InvalidArgument(std::string("y_ordered_kernel: ") + where + normalised_alternative +
                          accepted + " through ordered_kernel)");
  check::require(opt.n_starts >= 1, "n_starts", "must be at least 1");
  for (std::size_t j = 0; j < types_.size(); ++j) {
    if (types_[j] == VarType::continuous) continue;
    const bool is_x = j < X.n_cols;
    const arma::mat& M = is_x ? X_ : Y_;
    const std::size_t c = is_x ? j : j - X.n_cols;
    for (std::size_t i = 0; i < M.n_rows; ++i)
      if (!is_integer(M(i, c))) {
        std::ostringstream msg;
        msg << (is_x ? "X" : "y") << ": categorical column " << (c + 1)
            << " has the non-integer value " << M(i, c) << " at row " << (i + 1)
            << " (pass integer codes, e.g. 0, 1, 2 for the levels)";
        throw InvalidArgument(msg.str());
      }
  }
}

void DensityData::check_bandwidth(const arma::vec& bw, const std::string& arg) const {
  const std::size_t d = n_bandwidths();
  if (bw.n_elem != d) {
    std::ostringstream msg;
    msg << arg << ": has " << bw.n_elem << " values but the data have " << d
        << " columns (give one bandwidth per column: X's columns"
        << (kind_ == DensityKind::density ? "" : ", then y's") << ")";
    throw InvalidArgument(msg.str());
  }
  const std::vector<Column> cols = density_detail::make_columns(*this);
  for (std::size_t j = 0; j < d; ++j) {
    std::ostringstream a;
    a << arg << "[" << (j + 1) << "]";
    if (cols[j].continuous()) {
      if (!(std::isfinite(bw(j)) && bw(j) > 0.0)) {
        std::ostringstream msg;
        msg << a.str() << ": must be > 0 and finite for a continuous column, got " << bw(j)
            << " (pass a positive number, or \"normal_reference\")";
        throw InvalidArgument(msg.str());
      }
    } else {
      cols[j].ck.check_bandwidth(bw(j), cols[j].n_levels(), a.str());
    }
  }
}

namespace density_detail {

std::vector<Column> make_columns(const DensityData& data) {
  const std::size_t dx = data.X().n_cols;
  std::vector<Column> cols(data.n_bandwidths());
  for (std::size_t j = 0; j < cols.size(); ++j) {
    Column& c = cols[j];
    c.type = data.types()[j];
    if (c.continuous()) continue;
    const bool is_y = j >= dx;
    c.ck = c.type != VarType::ordered ? data.options().unordered
           : is_y                     ? data.options().ordered_y
                                      : data.options().ordered;
    const arma::vec col = j < dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - dx));
    const arma::vec u = arma::unique(col);
    c.levels.assign(u.begin(), u.end());
  }
  return cols;
}

arma::mat encode_training(const std::vector<Column>& cols, const arma::mat& Z) {
  arma::mat E = Z;
  for (std::size_t j = 0; j < cols.size(); ++j) {
    if (cols[j].continuous()) continue;
    const std::vector<double>& lv = cols[j].levels;
    for (std::size_t i = 0; i < Z.n_rows; ++i)
      E(i, j) = static_cast<double>(std::lower_bound(lv.begin(), lv.end(), Z(i, j)) - lv.begin());
  }
  return E;
}

double encode_query(const Column& col, Mode mode, double v, const std::string& arg,
                    std::size_t row, std::size_t column) {
  if (col.continuous()) return v;
  const std::vector<double>& lv = col.levels;
  if (mode == Mode::cdf)
    return static_cast<double>(std::upper_bound(lv.begin(), lv.end(), v) - lv.begin());
  auto it = std::lower_bound(lv.begin(), lv.end(), v);
  if (it == lv.end() || *it != v) {
    std::ostringstream msg;
    msg << arg << ": row " << (row + 1) << ", column " << (column + 1) << " has the category "
        << v << ", never seen in training (" << lv.size()
        << " levels seen); map it to a known level or drop the row";
    throw InvalidArgument(msg.str());
  }
  return static_cast<double>(it - lv.begin());
}

}  // namespace density_detail

namespace {

// Training rows grouped (distinct rows of the encoded [X Y]) and the query rows encoded.
struct Prepared {
  std::vector<Column> cols;
  arma::mat Zu;     // G x d distinct encoded training rows
  arma::vec count;  // G
  double n = 0;
};

// A column with the normalised Li-Racine kernel is a probability mass function on all the
// integers (kernel.hpp), so a query at an integer code never seen in training is a valid point
// there (np allows it for numeric ordered factors): such codes (in a distribution's y column,
// the integer part of the query) join the column's levels before the rows are encoded. Other
// kernels keep refusing unseen categories (encode_query).
void add_query_levels(std::vector<Column>& cols, std::size_t first_col, const arma::mat& Q,
                      Mode mode) {
  for (std::size_t c = 0; c < Q.n_cols; ++c) {
    Column& col = cols[first_col + c];
    if (col.continuous() || col.ck.type != CategoricalKernelType::li_racine_normalized) continue;
    std::vector<double>& lv = col.levels;
    for (std::size_t i = 0; i < Q.n_rows; ++i) {
      const double v = mode == Mode::cdf ? std::floor(Q(i, c)) : Q(i, c);
      if (!is_integer(v)) continue;  // encode_query names it
      auto it = std::lower_bound(lv.begin(), lv.end(), v);
      if (it == lv.end() || *it != v) lv.insert(it, v);
    }
  }
}

Prepared prepare_training(const DensityData& data, const arma::mat* Xq = nullptr,
                          const arma::mat* Yq = nullptr, Mode ymode = Mode::pdf) {
  Prepared p;
  p.cols = density_detail::make_columns(data);
  if (Xq) add_query_levels(p.cols, 0, *Xq, Mode::pdf);
  if (Yq) add_query_levels(p.cols, data.X().n_cols, *Yq, ymode);
  const arma::mat Z = data.kind() == DensityKind::density
                          ? data.X()
                          : arma::mat(arma::join_rows(data.X(), data.Y()));
  DistinctRows g = distinct_rows(density_detail::encode_training(p.cols, Z));
  p.Zu = std::move(g.X);
  p.count = std::move(g.count);
  p.n = static_cast<double>(data.n());
  return p;
}

arma::mat encode_queries(const Prepared& p, std::size_t first_col, const arma::mat& Q, Mode mode,
                         const std::string& arg) {
  arma::mat E = Q;
  for (std::size_t c = 0; c < Q.n_cols; ++c)
    for (std::size_t i = 0; i < Q.n_rows; ++i)
      E(i, c) = density_detail::encode_query(p.cols[first_col + c], mode, Q(i, c), arg, i, c);
  return E;
}

}  // namespace

arma::vec density_evaluate(const DensityData& data, const arma::vec& bandwidth,
                           const arma::mat& Xq, const arma::mat& Yq) {
  data.check_bandwidth(bandwidth, "bandwidth");
  const std::size_t dx = data.X().n_cols, dy = data.Y().n_cols;
  const bool cond = data.kind() != DensityKind::density;
  {
    std::ostringstream msg;
    msg << "has " << Xq.n_cols << " columns but the model was fitted with " << dx
        << " (pass the same columns as in fit)";
    check::require(Xq.n_cols == dx, "X_new", msg.str());
  }
  check::all_finite(Xq, "X_new");
  if (cond) {
    std::ostringstream msg;
    msg << "needs " << dy << " column(s) and one row per row of X_new (got " << Yq.n_rows << " x "
        << Yq.n_cols << ", X_new has " << Xq.n_rows << " rows)";
    check::require(Yq.n_cols == dy && Yq.n_rows == Xq.n_rows, "y_new", msg.str());
    check::all_finite(Yq, "y_new");
  }
  const Mode ymode = data.kind() == DensityKind::conditional_distribution ? Mode::cdf : Mode::pdf;
  const Prepared p = prepare_training(data, &Xq, cond ? &Yq : nullptr, ymode);
  const Kernel& K = data.options().kernel;
  std::vector<ColumnState> st(p.cols.size());
  for (std::size_t j = 0; j < p.cols.size(); ++j)
    st[j] = density_detail::make_state(p.cols[j], j < dx ? Mode::pdf : ymode, bandwidth(j), false);
  const arma::mat Ex = encode_queries(p, 0, Xq, Mode::pdf, "X_new");
  const arma::mat Ey = cond ? encode_queries(p, dx, Yq, ymode, "y_new") : arma::mat();
  const std::size_t m = Xq.n_rows, G = p.Zu.n_rows;
  arma::vec out(m);
  std::vector<char> empty(m, 0);
  const int threads = static_cast<double>(m) * G < 2e5 ? 1 : resolve_threads(data.options().n_threads);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> f(G), px(G), py(G);
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < m; ++i) {
      std::fill(px.begin(), px.end(), 1.0);
      std::fill(py.begin(), py.end(), 1.0);
      for (std::size_t j = 0; j < p.cols.size(); ++j) {
        const double q = j < dx ? Ex(i, j) : Ey(i, j - dx);
        density_detail::eval_column(p.cols[j], K, st[j], q, p.Zu.colptr(j), G, f.data(), nullptr);
        std::vector<double>& tgt = j < dx ? px : py;
        for (std::size_t b = 0; b < G; ++b) tgt[b] *= f[b];
      }
      double num = 0.0, den = 0.0;
      for (std::size_t b = 0; b < G; ++b) {
        const double w = p.count(b) * px[b];
        den += w;
        num += w * py[b];
      }
      if (!cond) {
        out(i) = den / p.n;
      } else if (den > 0.0) {
        out(i) = num / den;
      } else {
        empty[i] = 1;
        out(i) = std::numeric_limits<double>::quiet_NaN();
      }
    }
  }
  for (std::size_t i = 0; i < m; ++i)
    if (empty[i]) {
      std::ostringstream msg;
      msg << "X_new: row " << (i + 1)
          << " has no training point with positive kernel weight, so the conditional estimate "
             "is undefined there (use a larger bandwidth or the Gaussian kernel)";
      throw NumericalError(msg.str());
    }
  return out;
}

arma::vec conditional_quantile(const DensityData& data, const arma::vec& bandwidth,
                               const arma::mat& Xq, const arma::vec& tau) {
  check::require(data.kind() != DensityKind::density, "data",
                 "conditional quantiles need a conditional model (X and y)");
  const std::size_t dx = data.X().n_cols;
  check::require(data.Y().n_cols == 1 && data.types()[dx] == VarType::continuous, "y",
                 "conditional quantiles need one continuous y column");
  data.check_bandwidth(bandwidth, "bandwidth");
  check::require(Xq.n_cols == dx, "X_new",
                 "has " + std::to_string(Xq.n_cols) + " columns but the model was fitted with " +
                     std::to_string(dx) + " (pass the same columns as in fit)");
  check::all_finite(Xq, "X_new");
  check::require(tau.n_elem == 1 || tau.n_elem == Xq.n_rows, "tau",
                 "give one tau, or one per row of X_new");
  for (double t : tau)
    if (!(t > 0.0 && t < 1.0)) {
      std::ostringstream msg;
      msg << "tau: must be strictly between 0 and 1, got " << t
          << " (0 and 1 are the infinite ends of the distribution)";
      throw InvalidArgument(msg.str());
    }
  const Prepared p = prepare_training(data, &Xq);
  const Kernel& K = data.options().kernel;
  std::vector<ColumnState> st(dx);
  for (std::size_t j = 0; j < dx; ++j)
    st[j] = density_detail::make_state(p.cols[j], Mode::pdf, bandwidth(j), false);
  const double h = bandwidth(dx);
  const arma::mat Ex = encode_queries(p, 0, Xq, Mode::pdf, "X_new");
  const std::size_t m = Xq.n_rows, G = p.Zu.n_rows;
  const double* yv = p.Zu.colptr(dx);
  const double ymin = p.Zu.col(dx).min(), ymax = p.Zu.col(dx).max();
  const double scale = std::max({std::abs(ymin), std::abs(ymax), ymax - ymin, h});
  arma::vec out(m);
  std::vector<char> empty(m, 0);
  const int threads = static_cast<double>(m) * G < 2e4 ? 1 : resolve_threads(data.options().n_threads);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> f(G), w(G);
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < m; ++i) {
      std::fill(w.begin(), w.end(), 1.0);
      for (std::size_t j = 0; j < dx; ++j) {
        density_detail::eval_column(p.cols[j], K, st[j], Ex(i, j), p.Zu.colptr(j), G, f.data(),
                                    nullptr);
        for (std::size_t b = 0; b < G; ++b) w[b] *= f[b];
      }
      double den = 0.0;
      for (std::size_t b = 0; b < G; ++b) {
        w[b] *= p.count(b);
        den += w[b];
      }
      if (!(den > 0.0)) {
        empty[i] = 1;
        out(i) = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      const double t = tau.n_elem == 1 ? tau(0) : tau(i);
      auto F = [&](double y) {
        double s = 0.0;
        for (std::size_t b = 0; b < G; ++b) s += w[b] * density_detail::kcdf(K, (y - yv[b]) / h);
        return s / den;
      };
      // Bracket F(lo) < t <= F(hi), then bisect: F is non-decreasing in y.
      double step = h, lo = ymin - h, hi = ymax + h;
      for (int k = 0; k < 2000 && F(lo) >= t; ++k, step *= 2.0) lo -= step;
      step = h;
      for (int k = 0; k < 2000 && F(hi) < t; ++k, step *= 2.0) hi += step;
      for (int k = 0; k < 200 && hi - lo > 1e-13 * scale; ++k) {
        const double mid = 0.5 * (lo + hi);
        if (F(mid) >= t) hi = mid; else lo = mid;
      }
      out(i) = hi;
    }
  }
  for (std::size_t i = 0; i < m; ++i)
    if (empty[i]) {
      std::ostringstream msg;
      msg << "X_new: row " << (i + 1)
          << " has no training point with positive kernel weight, so the conditional quantile "
             "is undefined there (use a larger bandwidth or the Gaussian kernel)";
      throw NumericalError(msg.str());
    }
  return out;
}

arma::vec density_normal_reference(const DensityData& data, const std::string& arg) {
  const std::size_t d = data.n_bandwidths(), dx = data.X().n_cols;
  std::vector<std::size_t> cont;
  for (std::size_t j = 0; j < d; ++j)
    if (data.types()[j] == VarType::continuous) cont.push_back(j);
  check::require(!cont.empty(), arg,
                 "normal_reference needs at least one continuous column (all columns are "
                 "categorical); use cv_ml or cv_ls, or pass the bandwidths");
  arma::mat Zc(data.n(), cont.size());
  for (std::size_t a = 0; a < cont.size(); ++a) {
    const std::size_t j = cont[a];
    Zc.col(a) = j < dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - dx));
    if (Zc.col(a).min() == Zc.col(a).max()) {
      std::ostringstream msg;
      msg << (j < dx ? "X" : "y") << ": continuous column " << ((j < dx ? j : j - dx) + 1)
          << " is constant: no normal-reference bandwidth exists (drop the column)";
      throw InvalidArgument(msg.str());
    }
  }
  // np's constants: (4/3)^(1/5) = 1.059224 (Silverman's 1.06 unrounded) and the normal
  // IQR 1.348979500392163 (np's EssDee); quantiles as R's default (type 7).
  const double n = static_cast<double>(data.n()), q = static_cast<double>(cont.size());
  const Kernel& K = data.options().kernel;
  K.require_second_order("normal_reference", arg);
  const double delta_k = std::pow(K.roughness() / (K.mu2() * K.mu2()), 0.2);
  const double delta_phi = std::pow(0.28209479177387814347, 0.2);  // 1/(2 sqrt(pi))
  arma::vec bw(d, arma::fill::zeros);
  for (std::size_t a = 0; a < cont.size(); ++a) {
    const arma::vec x = arma::sort(Zc.col(a));
    auto quant = [&](double p) {
      const double pos = p * (n - 1.0);
      const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
      const std::size_t hi = std::min<std::size_t>(lo + 1, x.n_elem - 1);
      return x(lo) + (pos - lo) * (x(hi) - x(lo));
    };
    const double sd = arma::stddev(x), iqr = quant(0.75) - quant(0.25);
    const double s = iqr > 0.0 ? std::min(sd, iqr / 1.348979500392163) : sd;
    bw(cont[a]) = std::pow(4.0 / 3.0, 0.2) * s * std::pow(n, -1.0 / (4.0 + q)) * delta_k / delta_phi;
  }
  return bw;
}

}  // namespace attnreg
