"""Every public name of the package is importable from `leash` and documented."""

import leash


def test_every_public_name_is_importable_and_documented():
    for name in leash.__all__:
        obj = getattr(leash, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and "Parameters" in obj.__doc__, f"{name} lacks a numpydoc docstring"


def test_modules_are_not_shadowed_by_functions():
    import types

    from leash_eval import validate as v

    assert isinstance(v, types.ModuleType)
    import leash_eval.summarize

    assert isinstance(leash_eval.summarize, types.ModuleType)


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        leash.nope  # noqa: B018


def test_the_command_line_starts_without_numpy_scipy_or_pandas():
    """`leash` and its parser load no numeric library: the start-up of every command (a
    fresh process, as the command runs) pays only for what that command imports."""
    import subprocess
    import sys

    code = ("import sys, leash, leash_eval.cli; leash_eval.cli.build_parser(); "
            "print(sorted(m for m in "
            "('numpy', 'scipy', 'pandas', 'pyarrow', 'duckdb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
    assert callable(leash.pass_at_k) and "pass_at_k" in dir(leash)  # still there, on first use


def test_the_metric_core_and_the_package_import_without_pandas_or_scipy_stats():
    import subprocess
    import sys

    for modules in ("leash.core.passk, leash.core.support, leash.core.entropy, leash.core.stats, "
                    "leash.core._validation",
                    "leash"):
        code = (f"import {modules}, sys; loaded = [m for m in ('pandas', 'scipy.stats') if m in "
                "sys.modules]; assert not loaded, loaded")
        subprocess.run([sys.executable, "-c", code], check=True)


def test_the_package_exports_exactly_the_core_names_lazily():
    import leash.core

    from_core = {name for name, module in leash._LAZY.items() if module == "core"}
    assert from_core == set(leash.core.__all__)
    assert all(getattr(leash, name) is getattr(leash.core, name) for name in from_core)
