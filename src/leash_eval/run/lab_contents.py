"""The contents manager of JupyterLab's server in the repository's environment.

Each notebook of ``notebooks/`` is committed as jupytext Markdown and paired with an ``.ipynb``
that ``make install`` writes and git ignores (:mod:`leash.notebook_files`). JupyterLab lists
both, so every notebook shows twice, and a double-click on the ``.ipynb`` opens the same
notebook as its Markdown. :class:`PairedOnceContentsManager` lists a folder without the
``.ipynb`` files whose jupytext Markdown of the same stem sits beside them; everything else
(an ``.ipynb`` on its own, an executed copy in ``build/``, opening or saving any file by its
path) is jupyter_server's. ``ContentsManager.hide_globs`` cannot say this: it matches a name
alone, so it would hide every ``.ipynb`` of that name pattern, paired or not.

Set by :mod:`leash_eval.run.lab` as ``ServerApp.contents_manager_class``; jupytext's server
extension then derives its own contents manager from this one, as it does from the default.
"""

from __future__ import annotations

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from leash.notebook_files import is_notebook_markdown

__all__ = ["PairedOnceContentsManager"]


class PairedOnceContentsManager(AsyncLargeFileManager):
    """jupyter_server's default contents manager, listing each paired notebook once (by its
    Markdown).
    """

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        """The model of ``path``; a folder's listing leaves out the ``.ipynb`` of a pair."""
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if model.get("type") == "directory" and isinstance(model.get("content"), list):
            names = {m["name"] for m in model["content"]}
            folder = self._get_os_path(path)
            model["content"] = [
                m for m in model["content"]
                if not (m["name"].endswith(".ipynb") and m["name"][:-6] + ".md" in names
                        and is_notebook_markdown(f"{folder}/{m['name'][:-6]}.md"))]
        return model
