// attnreg R face: the option tables (attnreg/base/option_spec.hpp) for the drift test of the R
// functions' defaults (tests/testthat/test-option-spec.R), and the conversion of an R named list
// of options into the core's keyword set.
// [[Rcpp::depends(RcppArmadillo)]]
#include <RcppArmadillo.h>

#include <string>

#include "attnreg/base/error.hpp"
#include "attnreg/base/option_spec.hpp"
#include "r_options.hpp"

namespace attnreg_r {

attnreg::OptionValues option_values(const Rcpp::List& options) {
  attnreg::OptionValues out;
  if (options.size() == 0) return out;
  const Rcpp::CharacterVector names = options.names();
  for (R_xlen_t i = 0; i < options.size(); ++i) {
    const std::string name = Rcpp::as<std::string>(names[i]);
    SEXP v = options[i];
    if (Rf_isNull(v)) continue;
    if (Rf_xlength(v) != 1) {
      throw attnreg::InvalidArgument(name + ": must be a single value, got length " +
                                     std::to_string(Rf_xlength(v)));
    }
    switch (TYPEOF(v)) {
      case LGLSXP:
        if (LOGICAL(v)[0] == NA_LOGICAL)
          throw attnreg::InvalidArgument(name + ": must be TRUE or FALSE, got NA");
        out.set(name, LOGICAL(v)[0] != 0);
        break;
      case INTSXP:
        if (INTEGER(v)[0] == NA_INTEGER)
          throw attnreg::InvalidArgument(name + ": must be a whole number or NULL, got NA");
        out.set(name, static_cast<long long>(INTEGER(v)[0]));
        break;
      case REALSXP:
        if (!R_FINITE(REAL(v)[0])) {
          throw attnreg::InvalidArgument(name + ": must be a finite number or NULL (for the "
                                         "default), got " +
                                         (ISNA(REAL(v)[0]) ? "NA" : ISNAN(REAL(v)[0]) ? "NaN" : "Inf"));
        }
        out.set(name, REAL(v)[0]);
        break;
      case STRSXP:
        out.set(name, Rcpp::as<std::string>(v));
        break;
      default:
        throw attnreg::InvalidArgument(name + ": expected a number, logical or string");
    }
  }
  return out;
}

attnreg::KernelSpec kernel_spec(const std::string& kernel, const std::string& var_types,
                                const std::string& ukertype, const std::string& okertype,
                                int n_threads, const std::string& algorithm, double truncation) {
  attnreg::KernelSpec k;
  k.kernel = attnreg::Kernel::from_name(kernel, "kernel");
  k.var_types = var_types;
  k.unordered_kernel = attnreg::CategoricalKernel::from_name(ukertype, false, "ukertype");
  k.ordered_kernel = attnreg::CategoricalKernel::from_name(okertype, true, "okertype");
  k.algorithm = attnreg::pair_algorithm_from_name(algorithm, "algorithm");
  k.truncation = truncation;
  k.n_threads = n_threads;
  return k;
}

}  // namespace attnreg_r

// The option tables as a data frame (family, name, type, none_ok, allowed, doc, and the faces'
// spellings python and r) with the
// defaults in a list column `default` (NULL for "not given").
// [[Rcpp::export(name = ".option_spec")]]
Rcpp::List option_spec_r() {
  const std::vector<attnreg::OptionSpec> rows = attnreg::option_spec();
  const R_xlen_t n = static_cast<R_xlen_t>(rows.size());
  Rcpp::CharacterVector family(n), name(n), type(n), allowed(n), doc(n), python(n), rname(n);
  Rcpp::LogicalVector none_ok(n);
  Rcpp::List def(n);
  for (R_xlen_t i = 0; i < n; ++i) {
    const attnreg::OptionSpec& r = rows[static_cast<std::size_t>(i)];
    family[i] = r.family;
    name[i] = r.name;
    type[i] = r.type;
    allowed[i] = r.allowed;
    doc[i] = r.doc;
    python[i] = r.python;
    rname[i] = r.r;
    none_ok[i] = r.none_ok;
    if (r.type == "int") {
      def[i] = Rcpp::IntegerVector::create(static_cast<int>(r.number));
    } else if (r.type == "double") {
      if (r.is_none) {
        def[i] = R_NilValue;
      } else {
        def[i] = Rcpp::NumericVector::create(r.number);
      }
    } else if (r.type == "bool") {
      def[i] = Rcpp::LogicalVector::create(r.flag);
    } else {
      def[i] = Rcpp::CharacterVector::create(r.text);
    }
  }
  return Rcpp::List::create(Rcpp::Named("family") = family, Rcpp::Named("name") = name,
                            Rcpp::Named("type") = type, Rcpp::Named("default") = def,
                            Rcpp::Named("none_ok") = none_ok, Rcpp::Named("allowed") = allowed,
                            Rcpp::Named("doc") = doc, Rcpp::Named("python") = python,
                            Rcpp::Named("r") = rname);
}
