"""Running the notebooks elsewhere: Binder, Colab, and the ``.ipynb`` the site offers.

* **Binder** builds an image from the repository's ``environment.yml`` (Python, JupyterLab,
  jupytext, leash itself with ``pip -e .``), runs ``postBuild`` (JupyterLab's configuration of
  :mod:`leash_eval.run.lab`, so a notebook's Markdown opens as a notebook) and opens the URL's
  ``urlpath``: :func:`binder_url` lands on the first walkthrough part.
* **Colab** opens ``.ipynb`` files only, from a GitHub repository, and has no leash installed.
  ``make site`` writes each notebook as ``notebooks/<stem>.ipynb`` without outputs
  (:func:`colab_notebook`), whose first cell installs leash from the repository when it is
  missing (:func:`install_cell_source`; where leash is installed it does nothing). Published with
  the site on the repository's :data:`SITE_BRANCH` branch, :func:`colab_url` opens one in Colab;
  a downloaded one opens there with File > Upload notebook.

The repository's address is read from one place, ``[project.urls] Repository`` of
``pyproject.toml`` (installed: the distribution's metadata); the README's badges are these URLs
(``tests/test_launch.py`` checks them). Nothing here touches the network.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from leash import notebook_files
from leash.paths import CHECKOUT

__all__ = ["INSTALL_TAG", "SITE_BRANCH", "WALKTHROUGH", "binder_url", "colab_notebook",
           "colab_url", "install_cell_source", "install_spec", "repository"]

#: The branch that holds the published site (``build/site/``), whose ``notebooks/`` Colab opens.
SITE_BRANCH = "gh-pages"
#: Where Binder lands: the first part of the walkthrough.
WALKTHROUGH = "notebooks/00a_walkthrough_support.md"
#: The tag of the install cell :func:`colab_notebook` puts first.
INSTALL_TAG = "install-leash"
_GITHUB = re.compile(r"^https://github\.com/([^/\s]+)/([^/\s]+?)(?:\.git)?/?$")


def repository() -> str:
    """The repository's address, ``https://github.com/<owner>/<name>`` (``[project.urls]
    Repository`` of pyproject.toml, or of the installed distribution's metadata).
    """
    url = None
    if CHECKOUT is not None:
        import tomllib

        with open(CHECKOUT / "pyproject.toml", "rb") as f:
            url = tomllib.load(f)["project"].get("urls", {}).get("Repository")
    else:
        from importlib.metadata import metadata

        for entry in metadata("leash").get_all("Project-URL") or []:
            label, _, value = entry.partition(",")
            if label.strip().lower() == "repository":
                url = value.strip()
    if not url or not _GITHUB.match(url):
        raise ValueError(f"[project.urls] Repository of pyproject.toml must be a GitHub "
                         f"address, https://github.com/<owner>/<name>; got {url!r}.")
    return url.rstrip("/").removesuffix(".git")


def _owner_name() -> str:
    owner, name = _GITHUB.match(repository()).groups()
    return f"{owner}/{name}"


def binder_url(path: str = WALKTHROUGH, ref: str = "HEAD") -> str:
    """The Binder launch URL that opens ``path`` (a file of the repository) in JupyterLab.

    >>> binder_url().startswith("https://mybinder.org/v2/gh/")
    True
    """
    return (f"https://mybinder.org/v2/gh/{_owner_name()}/{ref}?urlpath="
            + urllib.parse.quote(f"lab/tree/{path}", safe="/"))


def colab_url(stem: str, branch: str = SITE_BRANCH) -> str:
    """The Colab URL of notebook ``stem`` as the published site holds it
    (``notebooks/<stem>.ipynb`` on ``branch``).
    """
    return (f"https://colab.research.google.com/github/{_owner_name()}/blob/{branch}/"
            f"notebooks/{urllib.parse.quote(stem)}.ipynb")


def install_spec() -> str:
    """What the install cell gives pip: leash from its repository."""
    return f"leash @ git+{repository()}.git"


def install_cell_source(spec: str | None = None) -> str:
    """The first cell of a notebook the site offers: installs leash (``spec``, default
    :func:`install_spec`) with this kernel's pip when it cannot be imported, else nothing.
    """
    spec = install_spec() if spec is None else spec
    return (
        "# Colab, or any Python without leash: install it first (a minute); where leash is\n"
        "# installed (its repository's environment, Binder) this cell does nothing.\n"
        "import importlib\n"
        "import importlib.util\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        'if importlib.util.find_spec("leash") is None:\n'
        '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",\n'
        f"                    {spec!r}], check=True)\n"
        "    importlib.invalidate_caches()"
    )


def colab_notebook(path, spec: str | None = None):
    """Notebook ``path`` (its committed Markdown) as an ``.ipynb`` to run anywhere: no outputs,
    the install cell first (tagged :data:`INSTALL_TAG`), then the notebook's own cells with
    their tags (``parameters``, ``solution``) and collapsed solutions.
    """
    import nbformat

    nb = notebook_files.read(Path(path))
    cell = nbformat.v4.new_code_cell(install_cell_source(spec), metadata={"tags": [INSTALL_TAG]})
    cell["id"] = INSTALL_TAG
    nb.cells.insert(0, cell)
    for c in nb.cells:
        if c["cell_type"] == "code":
            c["outputs"], c["execution_count"] = [], None
    nbformat.validate(nb)
    return nb
