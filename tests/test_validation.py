"""One generic test of the declared parameter validation (leash.core._validation).

Every public function of the metric core and of the layers above it that take scalar or choice
parameters declares its parameters once (``@validate_params``). These tests walk the
declarations, as scikit-learn's ``test_function_param_validation`` does: each parameter is fed
each invalid value its constraints list (one that no other constraint of the parameter
accepts), the other parameters a valid value, and the message must be the one template, naming
the parameter, the function and the bad value, shortly.
"""

import inspect

import numpy as np
import pytest

from _constraints import invalid_values, is_satisfied_by, valid_value
from leash import artifacts
from leash.analysis import flips, pairing, planning, sensitivity, tables
from leash.core import _validation, entropy, passk, stats, support
from leash.core._validation import InvalidParameterError
from leash.output import plots, printed, report
from leash.sources import demo, paper, simulate

# Modules whose every public function is declared (but EXEMPT), and modules of which only the
# declared ones are walked (their other functions take a study, which open_study validates).
MODULES = (passk, support, entropy, stats, tables, sensitivity, pairing, flips, planning,
           report, plots, simulate)
PARTLY = (artifacts, paper, demo, printed)
# Public functions without a declaration, and why.
EXEMPT = {
    "portable": "takes any value: it refuses one it cannot record in an index, naming it",
    "is_missing_answer": "takes any value: it is the test of what counts as a missing answer",
    "require_columns": "a check helper: its messages name its caller ('where')",
    "found_at_budget": "a helper of the tables, whose messages name their caller ('where')",
    "found_within": "the kernel of 'found within the first k samples', on inputs its callers "
                    "(pass_at_k_first, the tables, pairing) have validated",
}


def public_functions():
    """The public functions of MODULES, and the declared methods of their public classes
    (``Publisher.__init__``), by the name their messages give them.
    """
    for module in MODULES + PARTLY:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and obj.__module__ == module.__name__ and (
                    module in MODULES or hasattr(obj, "_parameter_constraints")):
                yield name, obj
            elif inspect.isclass(obj) and obj.__module__ == module.__name__:
                for member in vars(obj).values():
                    if inspect.isfunction(member) and hasattr(member, "_parameter_constraints"):
                        yield member._validated_name, member


DECLARED = [(name, f) for name, f in public_functions() if name not in EXEMPT]


def parameters(func):
    """The parameters of ``func`` but a method's ``self``."""
    return [p for p in inspect.signature(func).parameters.values() if p.name != "self"]


def test_the_walk_finds_the_public_functions():
    names = {name for name, _ in DECLARED}
    assert {"pass_at_k", "pass_at_k_curve", "epsilon", "support_metrics", "holm",
            "bootstrap_pass_at_k", "answer_entropy", "support_table", "pair_counts",
            "sensitivity_sweep"} <= names
    assert len(names) >= 40


@pytest.mark.parametrize("name, func", DECLARED)
def test_every_parameter_is_declared(name, func):
    declared = getattr(func, "_parameter_constraints", None)
    assert declared is not None, f"{name} has no @validate_params declaration"
    assert list(declared) == [p.name for p in parameters(func)], name
    assert func._validated_name == name


def valid_arguments(func):
    """Every parameter without a default, given a valid value of its first constraint (a
    method's ``self`` None: the refused value stops the call before the body)."""
    args = {p.name: valid_value(func._parameter_constraints[p.name][0])
            for p in parameters(func) if p.default is p.empty}
    return {"self": None, **args} if "self" in inspect.signature(func).parameters else args


def invalid_cases():
    for name, func in DECLARED:
        for param, constraints in func._parameter_constraints.items():
            for c in constraints:
                for value, got in invalid_values(c):
                    if any(is_satisfied_by(o, value) for o in constraints if o is not c):
                        continue  # valid through another constraint (None, a mapping, ...)
                    yield pytest.param(name, func, param, c, value, got,
                                       id=f"{name}-{param}-{type(c).__name__}-{got}")


def split_message(msg, name, param):
    head = f"The '{param}' parameter of {name} must be "
    assert msg.startswith(head), msg
    assert msg.endswith(" instead."), msg
    must, _, got = msg[len(head): -len(" instead.")].rpartition(". Got ")
    assert must and got, msg
    return must, got


@pytest.mark.parametrize("name, func, param, constraint, value, got", list(invalid_cases()))
def test_each_invalid_value_gets_the_template_message(name, func, param, constraint, value,
                                                      got):
    assert not is_satisfied_by(constraint, value)  # the generator's own value is invalid
    args = valid_arguments(func)
    for p, v in args.items():  # each valid alone (together they may fail a check between them)
        assert p == "self" or is_satisfied_by(func._parameter_constraints[p][0], v)
    args[param] = value
    with pytest.raises(InvalidParameterError) as info:
        func(**args)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    must, got_text = split_message(str(info.value), name, param)
    constraints = func._parameter_constraints[param]
    assert must in {str(c) for c in constraints} | {_validation._describe(constraints),
                                                    _validation._AT_MOST_INT64}
    assert got_text == got
    assert len(str(info.value)) < 400


@pytest.mark.parametrize("name, func", DECLARED)
def test_long_bad_values_are_cut_short(name, func):
    # holm printed a whole array, a string parameter its whole value
    long_values = ["x" * 5000, np.full((40, 50), -7.5), list(range(-1000, 0))]
    for param, constraints in func._parameter_constraints.items():
        for value in long_values:
            if any(is_satisfied_by(c, value) for c in constraints):
                continue
            args = valid_arguments(func)
            args[param] = value
            with pytest.raises(InvalidParameterError) as info:
                func(**args)
            _, got_text = split_message(str(info.value), name, param)
            assert len(got_text) <= 80, got_text


def test_normalised_values_reach_the_body():
    # a whole float is an int, a list of counts an int64 array, a bool array is not counts
    assert passk.pass_at_k(10.0, [3.0], np.uint8(2)).dtype == np.float64
    assert stats.mcnemar_exact(np.int64(5), 56.0) == stats.mcnemar_exact(5, 56)
    with pytest.raises(InvalidParameterError, match=r"Got array\(\[ True, False\]\) instead"):
        support.support_counts([1, 1], np.array([True, False]))


def test_the_template_is_one_format():
    err = _validation.invalid("k", "f", "an int", "0")
    assert str(err) == "The 'k' parameter of f must be an int. Got 0 instead."
    assert _validation.TEMPLATE.format(name="k", func="f", constraint="an int",
                                       value="0") == str(err)
