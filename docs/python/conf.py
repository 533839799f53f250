"""Sphinx configuration of the attnreg Python reference (built by tools/build-docs.sh).

Every page comes from the package's own docstrings (autodoc + autosummary, numpydoc-style text
read by napoleon); nothing is written by hand but the front page. The API pages are generated at
build time from each public module's ``__all__`` (or, for a module without one, the public
classes and functions it defines), so a new public name is documented without editing a list.
The build works offline (no intersphinx). It warns on a public object without a docstring and
on a cross-reference to an attnreg object that does not resolve; tools/build-docs.sh fails on
those warnings.
"""
from __future__ import annotations

import os
import pathlib
import sys

from sphinx.util import logging

HERE = pathlib.Path(__file__).resolve().parent
# Document the installed package, or the checkout's sources when PYTHONPATH points there.
if os.environ.get("ATTNREG_DOCS_SRC"):
    sys.path.insert(0, os.environ["ATTNREG_DOCS_SRC"])

import attnreg  # noqa: E402

sys.path.insert(0, str(HERE))

logger = logging.getLogger("attnreg-docs")

project = "attnreg"
author = "The attnreg developers"
copyright = "The attnreg developers (MIT licence)"
release = version = attnreg.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon"]
templates_path = ["_templates"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"attnreg {release}: Python reference"
html_static_path: list[str] = []

autosummary_generate = True
autosummary_imported_members = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # Attributes as fields: a property of the same name is documented once

# Cross-references: nitpicky, so an unresolved reference to an attnreg object fails the build;
# names from other packages (numpy, pandas, scikit-learn, ...) are not linked offline.
nitpicky = True
# Private names (a leading underscore, e.g. a base class in a return annotation) have no page.
nitpick_ignore_regex = [(r"py:.*", r"(?!attnreg\b).*"), (r"py:.*", r"attnreg(\.\w+)*\._\w*.*")]

from _api import write_api_pages  # noqa: E402

write_api_pages(HERE / "api")


def _defining_module(obj) -> str:
    target = obj.fget if isinstance(obj, property) else obj
    target = getattr(target, "__func__", target)
    return getattr(target, "__module__", None) or ""


def _skip_member(app, what, name, obj, skip, options):
    # Members that scikit-learn or the standard library define (get_params, set_output, ...)
    # are documented there; a class page lists the methods and properties attnreg defines.
    if what in ("class", "exception") and not skip:
        if not (callable(obj) or isinstance(obj, property)):
            return None
        mod = _defining_module(obj)
        if mod and not mod.startswith("attnreg"):
            return True
    return None


def _require_docstring(app, what, name, obj, options, lines):
    if what in ("module", "class", "exception", "function", "method", "property") and \
            not any(line.strip() for line in lines):
        logger.warning("%s %s has no docstring", what, name, type="attnreg", subtype="docstring")


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _require_docstring)
