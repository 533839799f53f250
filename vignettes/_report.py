"""Writer shared by the Python vignettes: Markdown text, tables, PNG figures and checked numbers.

A vignette builds a :class:`Report`, adds prose, tables and figures in reading order and calls
:meth:`Report.check` for every identity it claims: the measured difference is printed in the
document and on stdout, and a difference above its tolerance raises :class:`CheckFailed`, so
the vignette (and the CI job that renders it) fails instead of publishing a false claim.
:meth:`Report.save` writes ``<out>/<name>/index.md`` next to the figures.

Usage in a vignette::

    args = vignette_args(__doc__)          # --full, --out
    rep = Report("attention-is-kernel-regression", args.out, full=args.full)
    rep.h(2, "Section"); rep.p("Text ...")
    rep.check("NW vs softmax, max abs diff", diff, tol=1e-12)
    rep.figure(fig, "shift.png", "Caption.")
    rep.save()
"""
from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import textwrap
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


class CheckFailed(AssertionError):
    """A numerical claim of a vignette did not hold within its tolerance."""


def vignette_args(doc: str | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    ap.add_argument("--full", action="store_true",
                    help="the full replication counts (default: the smaller CI counts)")
    ap.add_argument("--out", default=str(ROOT / "vignettes" / "out"),
                    help="output root; the vignette writes <out>/<name>/index.md and PNGs")
    return ap.parse_args()


class Report:
    def __init__(self, name: str, out_root: str | pathlib.Path, *, full: bool = False,
                 title: str | None = None):
        self.name = name
        self.full = full
        self.dir = pathlib.Path(out_root) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self._parts: list[str] = []
        self._checks: list[tuple[str, float, float]] = []
        self._t0 = time.perf_counter()
        if title:
            self.h(1, title)

    # ---------------------------------------------------------------- text
    def h(self, level: int, text: str) -> None:
        self._parts.append("#" * level + " " + text + "\n")
        print("\n" + "#" * level + " " + text, flush=True)

    def p(self, text: str) -> None:
        """A paragraph (dedented; blank lines separate paragraphs)."""
        self._parts.append(textwrap.dedent(text).strip() + "\n")

    def code(self, text: str, lang: str = "") -> None:
        self._parts.append(f"```{lang}\n{textwrap.dedent(text).strip()}\n```\n")

    def output(self, text: str) -> None:
        """Printed output, shown verbatim in the document and on stdout."""
        text = textwrap.dedent(text).rstrip()
        print(text, flush=True)
        self._parts.append("```\n" + text + "\n```\n")

    def table(self, df, floatfmt: str = "{:.4g}", index: bool = False) -> None:
        """A pandas DataFrame as a Markdown pipe table (also printed)."""
        cols = ([df.index.name or ""] if index else []) + [str(c) for c in df.columns]
        rows = []
        for idx, r in df.iterrows():
            cells = [str(idx)] if index else []
            for v in r.tolist():
                if isinstance(v, (float, np.floating)):
                    cells.append(floatfmt.format(v))
                else:
                    cells.append(str(v))
            rows.append(cells)
        lines = ["| " + " | ".join(cols) + " |",
                 "|" + "|".join("---:" if i else "---" for i in range(len(cols))) + "|"]
        lines += ["| " + " | ".join(c) + " |" for c in rows]
        md = "\n".join(lines)
        print(md, flush=True)
        self._parts.append(md + "\n")

    # ---------------------------------------------------------------- numbers
    def check(self, label: str, value: float, tol: float, *, kind: str = "max abs diff") -> float:
        """Record a measured difference; raise CheckFailed when it exceeds ``tol``."""
        value = float(value)
        ok = np.isfinite(value) and value <= tol
        line = f"{label}: {kind} = {value:.3e} (tolerance {tol:.0e}) {'OK' if ok else 'FAILED'}"
        print("  check " + line, flush=True)
        self._checks.append((label, value, tol))
        self._parts.append(f"- check: {line}\n")
        if not ok:
            self.save()  # keep what was written, for the post-mortem
            raise CheckFailed(line)
        return value

    # ---------------------------------------------------------------- figures
    def figure(self, fig, filename: str, caption: str) -> None:
        path = self.dir / filename
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt
        plt.close(fig)
        self._parts.append(f"![{caption}]({filename})\n\n*{caption}*\n")
        print(f"  figure {path}", flush=True)

    # ---------------------------------------------------------------- output
    def save(self) -> pathlib.Path:
        import attnreg
        elapsed = time.perf_counter() - self._t0
        n_bad = sum(1 for _, v, t in self._checks if not (np.isfinite(v) and v <= t))
        footer = (f"---\n\n*Rendered by `python3 vignettes/{self.name}.py"
                  f"{' --full' if self.full else ''}` with attnreg {attnreg.__version__}, numpy "
                  f"{np.__version__}, Python {platform.python_version()} in {elapsed:.1f} s; "
                  f"{len(self._checks)} numerical checks, {n_bad} outside tolerance.*\n")
        path = self.dir / "index.md"
        path.write_text("\n".join(self._parts) + "\n" + footer)
        print(f"\nwrote {path} ({elapsed:.1f} s)", file=sys.stderr, flush=True)
        return path
