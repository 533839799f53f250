// Python bindings for the regression-summary statistics (attnreg/least_squares/least_squares_summary.hpp):
// prediction variances, the regression Wald F and the Gaussian log-likelihood.
#include <pybind11/pybind11.h>

#include <type_traits>
#include <utility>

#include "attnreg/least_squares/least_squares_summary.hpp"
#include "convert.hpp"

namespace py = pybind11;
using attnreg_py::as_mat;
using attnreg_py::farray;
using attnreg_py::to_numpy;

namespace {

// The observation weights of a fit, when this build's OLS has weighted fits (an empty vector
// otherwise): detected at compile time, so this file builds with and without weighted OLS.
template <class M, class = void>
struct has_weights : std::false_type {};
template <class M>
struct has_weights<M, std::void_t<decltype(std::declval<const M&>().weights())>>
    : std::true_type {};

template <class M>
arma::vec fit_weights(const M& model) {
  if constexpr (has_weights<M>::value) {
    return arma::vec(model.weights());
  } else {
    return arma::vec();
  }
}

}  // namespace

void init_ls_summary(py::module_& m) {
  m.def(
      "ols_fit_weights",
      [](const attnreg::OLS& model) { return to_numpy(fit_weights(model)); },
      py::arg("model"), "Observation weights of a weighted fit (empty when unweighted).");
  m.def(
      "ols_prediction_variance",
      [](const attnreg::OLS& model, const farray& X, const farray& V) {
        const arma::mat x = as_mat(X, "X"), v = as_mat(V, "V");
        return to_numpy(attnreg::ols_prediction_variance(model, x, v));
      },
      py::arg("model"), py::arg("X"), py::arg("V"),
      "d(x)' V d(x) for each row of X: the variance of the predicted mean.");
  m.def(
      "ols_slopes_wald",
      [](const attnreg::OLS& model, const farray& V, arma::uword output) {
        const attnreg::SlopesWaldTest t =
            attnreg::ols_slopes_wald(model, as_mat(V, "V"), output);
        return py::make_tuple(t.statistic, t.df_num);
      },
      py::arg("model"), py::arg("V"), py::arg("output") = 0,
      "(F, df_num): Wald F statistic that all slopes are zero under the covariance V.");
  m.def(
      "wald_f_statistic",
      [](const farray& b, const farray& V) {
        return attnreg::wald_f_statistic(arma::vectorise(as_mat(b, "b")), as_mat(V, "V"));
      },
      py::arg("b"), py::arg("V"), "Wald F statistic b' V^{-1} b / m (nan when V is singular).");
  m.def(
      "gaussian_loglik",
      [](const farray& e, const farray& w, bool frequency) {
        const arma::mat em = as_mat(e, "residuals"), wm = as_mat(w, "weights");
        return attnreg::gaussian_loglik(arma::vectorise(em), arma::vectorise(wm), frequency);
      },
      py::arg("residuals"), py::arg("weights"), py::arg("frequency") = false,
      "Gaussian log-likelihood of residuals with observation weights (empty = all ones);\n"
      "frequency: weights count repeated rows (n = sum w, no log w term).");
}
