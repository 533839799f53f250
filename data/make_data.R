## Regenerate data/cps1988.csv, data/engel.csv and data/usmacro.csv from the
## Debian-packaged R packages (r-cran-aer, r-cran-quantreg):
##   apt-get install -y r-cran-aer r-cran-quantreg
##   Rscript data/make_data.R          # from the repository root
## The NIST files in data/nist/ are not produced here (see data/README.md).

args <- commandArgs(trailingOnly = FALSE)
file_arg <- sub("^--file=", "", args[grep("^--file=", args)])
out_dir <- if (length(file_arg)) dirname(normalizePath(file_arg)) else "data"

write_plain <- function(df, name) {
  path <- file.path(out_dir, name)
  ## single header line, comma separated, no quotes, no row names,
  ## missing values as empty fields, numbers with 15 significant digits
  write.csv(df, path, row.names = FALSE, quote = FALSE, na = "")
  ## the file must read back to exactly the same values
  back <- read.csv(path, stringsAsFactors = FALSE)
  for (v in names(df)) {
    a <- df[[v]]; b <- back[[v]]
    if (is.factor(a)) a <- as.character(a)
    if (!identical(is.na(a), is.na(b)) ||
        !all(a[!is.na(a)] == b[!is.na(b)]))
      stop(sprintf("%s: column %s does not round-trip", name, v))
  }
  cat(sprintf("%-13s %6d rows x %2d columns\n", name, nrow(df), ncol(df)))
}

suppressPackageStartupMessages({
  library(AER)       # CPS1988, USMacroG
  library(quantreg)  # engel
})

## 1. CPS1988: March 1988 Current Population Survey wage data (AER)
data("CPS1988", package = "AER")
stopifnot(nrow(CPS1988) == 28155)
write_plain(CPS1988[, c("wage", "education", "experience", "ethnicity",
                        "smsa", "region", "parttime")], "cps1988.csv")

## 2. Engel food expenditure data (quantreg)
data("engel", package = "quantreg")
stopifnot(nrow(engel) == 235)
write_plain(engel[, c("income", "foodexp")], "engel.csv")

## 3. USMacroG: quarterly US macroeconomic data 1950Q1-2000Q4 (AER)
data("USMacroG", package = "AER")
tt <- time(USMacroG)
year <- as.integer(floor(tt + 1e-8))
qtr <- as.integer(cycle(USMacroG))
usmacro <- data.frame(quarter = sprintf("%dQ%d", year, qtr), year = year,
                      qtr = qtr, as.data.frame(unclass(USMacroG)))
stopifnot(nrow(usmacro) == 204)
write_plain(usmacro, "usmacro.csv")
