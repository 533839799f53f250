// attnreg: normal and Student t distribution functions from Boost.Math (see distributions.hpp).
#include "attnreg/inference/distributions.hpp"
#include "attnreg/base/constants.hpp"

#include <cmath>
#include <limits>

#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include "attnreg/least_squares/least_squares.hpp"  // declares student_t_sf

namespace attnreg {

namespace {

// Never throw from a distribution function: the callers check their arguments and read NaN
// (or an infinite quantile) for what is left.
using Policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;


const boost::math::normal_distribution<double, Policy>& standard_normal() {
  static const boost::math::normal_distribution<double, Policy> n(0.0, 1.0);
  return n;
}

}  // namespace

double normal_quantile(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return kNaN;
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  return boost::math::quantile(standard_normal(), p);
}

double normal_sf(double z) {
  if (std::isnan(z)) return kNaN;
  if (std::isinf(z)) return z > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(standard_normal(), z));
}

double student_t_sf(double t, double df) {
  if (std::isnan(t) || std::isnan(df) || !(df > 0.0)) return kNaN;
  if (std::isinf(df)) return normal_sf(t);
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(
      boost::math::complement(boost::math::students_t_distribution<double, Policy>(df), t));
}

double fisher_f_sf(double f, double df1, double df2) {
  if (std::isnan(f) || std::isnan(df1) || std::isnan(df2) || !(df1 > 0.0) || !(df2 > 0.0))
    return kNaN;
  if (f <= 0.0) return 1.0;
  if (std::isinf(f)) return 0.0;
  return boost::math::cdf(boost::math::complement(
      boost::math::fisher_f_distribution<double, Policy>(df1, df2), f));
}

double chi_squared_cdf(double x, double df) {
  if (std::isnan(x) || std::isnan(df) || !(df > 0.0)) return kNaN;
  if (x <= 0.0) return 0.0;
  if (std::isinf(x)) return 1.0;
  return boost::math::gamma_p(df / 2.0, x / 2.0, Policy());
}

double student_t_quantile(double p, double df) {
  if (std::isnan(p) || std::isnan(df) || !(df > 0.0) || p < 0.0 || p > 1.0) return kNaN;
  if (std::isinf(df)) return normal_quantile(p);
  if (p == 0.0) return -kInf;
  if (p == 1.0) return kInf;
  return boost::math::quantile(boost::math::students_t_distribution<double, Policy>(df), p);
}

}  // namespace attnreg
