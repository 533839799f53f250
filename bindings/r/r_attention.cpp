// attnreg R face: the attention engine (attnreg/attention/attention.hpp). Thin: R matrices and arrays
// are read in place through their (column-major) strides, options arrive as arguments, the
// output is a new R array and the diagnostics a list. The documented R API is R/attention.R.
//
// Layout: a matrix is (seq, dim); a 3-d array (batch, seq, dim); a 4-d array
// (batch, heads, seq, dim) - the same axis order as the Python face and the core, stored
// column-major as R does (element [b, h, s, d] at b + B (h + H (s + S d))).
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/attention/attention_device.hpp"
#include "attnreg/attention/attention_options.hpp"
#include "attnreg/base/build_info.hpp"
#include "attnreg/base/error.hpp"
#include "r_options.hpp"

namespace at = attnreg::attention;

namespace {

using i64 = std::int64_t;

struct Dims {
  int nd = 0;
  i64 shape[4] = {1, 1, 1, 1};
  i64 strides[4] = {0, 0, 0, 0};
};

Dims dims_of(SEXP x, const char* name) {
  Rcpp::RObject obj(x);
  if (!obj.hasAttribute("dim")) {
    throw attnreg::InvalidArgument(std::string(name) +
                                   ": expected a matrix (seq, dim) or an array (batch, seq, "
                                   "dim) / (batch, heads, seq, dim); got a vector without dim");
  }
  const Rcpp::IntegerVector dv = obj.attr("dim");
  Dims d;
  d.nd = dv.size();
  if (d.nd < 2 || d.nd > 4) {
    throw attnreg::InvalidArgument(std::string(name) + ": expected 2 to 4 dimensions, got " +
                                   std::to_string(d.nd));
  }
  // Map R's axes onto (batch, heads, seq, dim).
  const int off = 4 - d.nd;
  i64 stride = 1;
  for (int i = 0; i < d.nd; ++i) {
    d.shape[off + i] = dv[i];
    d.strides[off + i] = stride;
    stride *= dv[i];
  }
  if (d.nd == 3) {  // (batch, seq, dim) -> (batch, 1, seq, dim)
    d.shape[0] = d.shape[1];
    d.strides[0] = d.strides[1];
    d.shape[1] = 1;
    d.strides[1] = 0;
  }
  return d;
}

at::View<const double> view_of(const Rcpp::NumericVector& x, const char* name) {
  const Dims d = dims_of(x, name);
  return at::make_view<const double>(REAL(x), d.shape, d.strides);
}

/// Let K and V with a single batch / head serve every batch / head of Q (zero strides).
void broadcast_to(at::View<const double>& v, const at::View<const double>& q) {
  for (int a = 0; a < 2; ++a)
    if (v.shape[a] == 1 && q.shape[a] > 1) {
      v.shape[a] = q.shape[a];
      v.strides[a] = 0;
    }
}

/// A new R array shaped like Q with the last axis replaced by `last`.
Rcpp::NumericVector new_output(const Rcpp::NumericVector& Q, i64 last, at::View<double>& view) {
  const Rcpp::IntegerVector qd = Rcpp::RObject(Q).attr("dim");
  Rcpp::IntegerVector od = Rcpp::clone(qd);
  od[od.size() - 1] = static_cast<int>(last);
  R_xlen_t n = 1;
  for (int i = 0; i < od.size(); ++i) n *= od[i];
  Rcpp::NumericVector out(n);
  out.attr("dim") = od;
  const Dims d = dims_of(out, "out");
  view = at::make_view<double>(REAL(out), d.shape, d.strides);
  return out;
}

/// Ridge: length 1 (scalar), n_q (per position) or an array (batch, heads, n_q) in R's order,
/// reordered to the core's row-major (b, h, i).
void set_ridge(at::Options& o, const Rcpp::NumericVector& ridge, const at::View<const double>& q) {
  if (ridge.size() == 1 && !Rcpp::RObject(ridge).hasAttribute("dim")) {
    o.ridge = ridge[0];
    return;
  }
  Rcpp::RObject obj(ridge);
  if (obj.hasAttribute("dim")) {
    const Rcpp::IntegerVector rd = obj.attr("dim");
    if (rd.size() != 3 || rd[0] != q.shape[0] || rd[1] != q.shape[1] || rd[2] != q.shape[2]) {
      throw attnreg::InvalidArgument(
          "ridge: an array ridge must have dim c(batch, heads, n_q) matching Q");
    }
    const i64 B = rd[0], H = rd[1], N = rd[2];
    o.ridge_per_query.resize(static_cast<std::size_t>(B * H * N));
    for (i64 b = 0; b < B; ++b)
      for (i64 h = 0; h < H; ++h)
        for (i64 i = 0; i < N; ++i) o.ridge_per_query[(b * H + h) * N + i] = ridge[b + B * (h + H * i)];
    return;
  }
  o.ridge_per_query.assign(ridge.begin(), ridge.end());
}

Rcpp::List diag_list(const at::Diagnostics& d) {
  return Rcpp::List::create(
      Rcpp::Named("method") = d.method, Rcpp::Named("n_threads") = d.n_threads,
      Rcpp::Named("n_query_blocks") = static_cast<double>(d.n_query_blocks),
      Rcpp::Named("cg_iterations") = Rcpp::IntegerVector(d.cg_iterations.begin(), d.cg_iterations.end()),
      Rcpp::Named("cg_max_iterations") = d.cg_max_iterations,
      Rcpp::Named("cg_iteration_limit") = d.cg_iteration_limit,
      Rcpp::Named("cg_tol") = d.cg_tol, Rcpp::Named("cg_converged") = d.cg_converged,
      Rcpp::Named("cg_rows_not_converged") = static_cast<double>(d.cg_rows_not_converged),
      Rcpp::Named("cg_max_relative_residual") = d.cg_max_relative_residual,
      Rcpp::Named("min_relative_denominator") = d.min_relative_denominator,
      Rcpp::Named("warnings") = Rcpp::CharacterVector(d.warnings.begin(), d.warnings.end()));
}

/// The options of a call: the named list through the core's one mapping
/// (attention::options_from, defaults from the option table); the ridge is set by set_ridge.
at::Options make_options(const Rcpp::List& options) {
  return at::options_from(attnreg_r::option_values(options));
}

/// "cpu" or "cuda". Without a CUDA build (the R package is built CPU-only) or without a visible
/// GPU, the core's device switch (attention_device.hpp) throws require_cuda()'s clear message.
at::Device check_device(const std::string& device) {
  if (device != "cpu" && device != "cuda") {
    throw attnreg::InvalidArgument("device: unknown '" + device + "' (choose \"cpu\" or \"cuda\")");
  }
  if (device == "cuda") attnreg::require_cuda("device");  // "built without CUDA" / "no GPU visible"
  return at::parse_device(device, "device");
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List attn_forward_cpp(Rcpp::NumericVector Q, Rcpp::NumericVector K, Rcpp::NumericVector V,
                            Rcpp::NumericVector ridge, Rcpp::List options, std::string device) {
  const at::Device dev = check_device(device);
  at::Options o = make_options(options);
  const at::View<const double> q = view_of(Q, "Q");
  at::View<const double> k = view_of(K, "K"), v = view_of(V, "V");
  broadcast_to(k, q);
  broadcast_to(v, q);
  set_ridge(o, ridge, q);
  at::View<double> ov;
  Rcpp::NumericVector out = new_output(Q, v.shape[3], ov);
  const at::Diagnostics d = at::forward<double>(q, k, v, ov, o, dev);
  return Rcpp::List::create(Rcpp::Named("output") = out, Rcpp::Named("info") = diag_list(d));
}

// [[Rcpp::export]]
Rcpp::NumericVector attn_weights_cpp(Rcpp::NumericVector Q, Rcpp::NumericVector K,
                                     Rcpp::NumericVector ridge, Rcpp::List options) {
  at::Options o = make_options(options);
  o.lla_algorithm = at::LLAAlgorithm::naive;
  const at::View<const double> q = view_of(Q, "Q");
  at::View<const double> k = view_of(K, "K");
  broadcast_to(k, q);
  set_ridge(o, ridge, q);
  at::View<double> ov;
  Rcpp::NumericVector out = new_output(Q, k.shape[2], ov);
  at::attention_weights<double>(q, k, ov, o);
  return out;
}
