// attention::Options from a face's keyword set: the one place that maps keyword names onto the
// struct (the pybind and Rcpp faces used to repeat this mapping).
#include "attnreg/attention/attention_options.hpp"

#include "attnreg/base/option_spec.hpp"

namespace attnreg {
namespace attention {

Options options_from(const OptionValues& kw, const std::string& algorithm_arg) {
  kw.require_known("attention");
  namespace defaults = attnreg::spec::attention;
  Options o;
  o.method = parse_method(kw.text("method", defaults::method));
  o.causal = kw.flag("causal", o.causal);
  o.window = kw.integer("window", o.window);
  o.scale = kw.real("scale", o.scale);
  o.bandwidth = kw.real("bandwidth", o.bandwidth);
  o.ridge = kw.real("ridge", o.ridge);
  o.lla_algorithm = parse_lla_algorithm(kw.text("algorithm", defaults::algorithm), algorithm_arg);
  o.lla_kernel = parse_lla_kernel(kw.text("kernel", defaults::kernel));
  o.block_q = kw.integer("block_q", o.block_q);
  o.block_k = kw.integer("block_k", o.block_k);
  o.cg_tol = kw.real("cg_tol", o.cg_tol);
  o.cg_max_iter = static_cast<int>(kw.integer("cg_max_iter", o.cg_max_iter));
  o.feature_map = parse_feature_map(kw.text("feature_map", defaults::feature_map));
  o.feature_tau = kw.real("feature_tau", o.feature_tau);
  o.normalize = kw.flag("normalize", o.normalize);
  o.n_threads = static_cast<int>(kw.integer("n_threads", o.n_threads));
  return o;
}

}  // namespace attention
}  // namespace attnreg
