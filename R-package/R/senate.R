#' US Senate elections data (Cattaneo, Frandsen and Titiunik 2015)
#'
#' The regression discontinuity data of Cattaneo, Frandsen and Titiunik (2015, "Randomization
#' inference in the regression discontinuity design: an application to party advantages in the
#' U.S. Senate", Journal of Causal Inference 3(1), 1-24), as distributed with the rdpackages
#' rdrobust software (<https://github.com/rdpackages/rdrobust>; public): 1,390 Senate
#' elections, 1914-2010.
#'
#' @format A data frame with 1390 rows and 17 columns:
#' \describe{
#'   \item{state, year}{State and election year.}
#'   \item{margin}{Democratic margin of victory at election t, in percentage points (the
#'     running variable; cutoff 0).}
#'   \item{vote}{Democratic vote share at election t + 2 as rdrobust documents it (the
#'     outcome; `NA` in 93 rows).}
#'   \item{class, termshouse, termssenate, dopen, population, presdemvoteshlag1,
#'     demvoteshlag1, demvoteshlag2, demvoteshfor1, demwinprv1, demwinprv2, dmidterm,
#'     dpresdem}{The covariates of Cattaneo, Frandsen and Titiunik (2015).}
#' }
#' @source Cattaneo, Frandsen and Titiunik (2015), Journal of Causal Inference 3(1), 1-24; the
#'   file `rdrobust_RDsenate.csv` of rdrobust (Calonico, Cattaneo, Farrell and Titiunik 2017,
#'   Stata Journal 17(2)). Python: `attnreg.datasets.load_senate()`.
#' @examples
#' data(senate)
#' rd_robust(senate$vote, senate$margin)
#' @name senate
#' @docType data
#' @usage data(senate)
#' @keywords datasets
NULL
