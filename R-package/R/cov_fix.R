# The eigenvalue fix of an indefinite two-way clustered covariance, as the core reports it.

# Warn when the core replaced an indefinite two-way clustered covariance V_1 + V_2 - V_12 by
# U max(Lambda, 0) U' (Cameron, Gelbach and Miller 2011, sec. 2.3); returns the flag.
.note_cov_fix <- function(inf, what) {
  fixed <- isTRUE(inf$psd_fixed)
  if (fixed) {
    warning(what, ": the two-way clustered covariance V_1 + V_2 - V_12 was not positive ",
            "semi-definite (smallest eigenvalue ", format(signif(inf$psd_min_eigenvalue, 3)),
            " times the largest); it was replaced by U max(Lambda, 0) U' (the eigenvalue fix of ",
            "Cameron, Gelbach and Miller 2011, J. Bus. Econ. Stat. 29(2), sec. 2.3, ",
            "doi:10.1198/jbes.2010.07136, as reghdfe and fixest do), so the standard errors are ",
            "those of the fixed covariance (cov_fixed is TRUE)", call. = FALSE)
  }
  fixed
}
