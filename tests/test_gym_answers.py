"""The paper's Reasoning Gym answer rewrites (arXiv 2507.14843v4, App. B.3), rule by rule on the
appendix's own examples, then through Reasoning Gym's real scorers (``leash rescore --scorer
reasoning-gym --extract reasoning-gym``).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from leash_eval import rescore as rs
from leash_eval.gym_answers import FAMILIES, family, rewrite


@pytest.mark.parametrize("task, answer, expected", [
    # dice: the answer in the gold's a/b (the appendix converts between a/b and \frac{a}{b})
    ("dice", r"\frac{3}{8}", "3/8"),
    ("dice", r"$\dfrac{823}{1575}$", "823/1575"),
    ("dice", "3/8", "3/8"),
    # prime_factorization: \times -> ×, a^b expanded, the right side of "="
    ("prime_factorization", r"561 = 3 \times 11 \times 17", "3 × 11 × 17"),
    ("prime_factorization", "561 = 3 × 11 × 17", "3 × 11 × 17"),
    ("prime_factorization_hard", r"2^3 \times 5", "2 × 2 × 2 × 5"),
    ("prime_factorization", "2^{2} × 3", "2 × 2 × 3"),
    # palindrome_generation: whitespace removed
    ("palindrome_generation", "k h g a g h k", "khgaghk"),
    # advanced_geometry: \left/\right, ^\circ, LaTeX and radicals to a 3-decimal float
    ("advanced_geometry", r"\frac{\sqrt{3}}{2}", "0.866"),
    ("advanced_geometry", r"\left(\sqrt{2} + 1\right)", "2.414"),
    ("advanced_geometry_hard", r"2\sqrt{2}+1", "3.828"),
    ("advanced_geometry", r"\sin(\pi/6)", "0.500"),
    ("advanced_geometry", r"45^\circ", "45°"),
    ("advanced_geometry", "2.425", "2.425"),
    # power_function: mixed scientific notation to e-notation (the appendix's examples, with
    # the superscript the PDF's text flattens)
    ("power_function", "\u22122.36 × 10^{\u221216}", "-2.36e-16"),
    ("power_function", r"-2.36 \times 10^{-16}", "-2.36e-16"),
    ("power_function", "1.5 × 10^5", "1.5e5"),
    ("power_function", "9.36e-18", "9.36e-18"),
    # arc_1d: digits spaced; a LaTeX array to its digits
    ("arc_1d", "0012", "0 0 1 2"),
    ("arc_1d", r"\begin{array}{cccc} 0 & 0 & 4 & 4 \end{array}", "0 0 4 4"),
    ("arc_1d", "0 0 4 4", "0 0 4 4"),
    # tasks the appendix does not rewrite
    ("leg_counting", " 12 ", " 12 "),
])
def test_each_rule_on_the_appendix_examples(task, answer, expected):
    assert rewrite(task, answer) == expected


def test_boxnet_rules():
    a = 'Agent[0.5, 0.5]'
    plan = [{a: "move(box_red, square[0.5, 1.5])"}]
    assert rewrite("boxnet", "42") is None  # a bare number is rejected
    assert json.loads(rewrite("boxnet", "```json\n" + json.dumps(plan) + "\n```")) == plan
    assert json.loads(rewrite("boxnet", json.dumps(plan[0]))) == plan  # dict -> [dict]
    assert json.loads(rewrite("boxnet", json.dumps([plan[0], "noise", 3]))) == plan
    nested_list = [{a: ["move(box_red, square[0.5, 1.5])", "other"]}]
    assert json.loads(rewrite("boxnet", json.dumps(nested_list))) == plan
    nested_dict = [{a: {a: "move(box_red, square[0.5, 1.5])", "x": "y"}}]
    assert json.loads(rewrite("boxnet", json.dumps(nested_dict))) == plan
    first_value = [{a: {"x": "move(box_red, square[0.5, 1.5])"}}]
    assert json.loads(rewrite("boxnet", json.dumps(first_value))) == plan


def test_families_and_missing_answers():
    assert set(FAMILIES) == {"dice", "prime_factorization", "palindrome_generation",
                             "advanced_geometry", "power_function", "arc_1d", "boxnet"}
    assert family("graph_color_vertex20") is None and family("arc_1d") == "arc_1d"
    assert rewrite("dice", None) is None


@pytest.mark.parametrize("task, response", [
    ("palindrome_generation", "<answer>{}</answer>"),
    ("prime_factorization", "<answer>{}</answer>"),
])
def test_the_rewrites_turn_wrong_into_right_through_the_real_scorer(task, response):
    reasoning_gym = pytest.importorskip("reasoning_gym")
    data = reasoning_gym.create_dataset(task, size=2, seed=0)
    entries = {str(i): data[i] for i in range(2)}
    gold = [data[i]["answer"] for i in range(2)]
    if task.startswith("palindrome"):
        first = " ".join(gold[0])  # "k h g a g h k"
    else:  # "866 = 2 \\times 433"
        n = 1
        for f in gold[0].split("×"):
            n *= int(f)
        first = f"{n} = " + gold[0].replace("×", "\\times")
    written = [first, gold[1]]
    samples = pd.DataFrame({"question_id": ["0", "1"],
                            "response": [response.format(w) for w in written]})
    plain = rs.rescore(samples, entries, scorer="reasoning-gym", task=task)
    fixed = rs.rescore(samples, entries, scorer="reasoning-gym", task=task,
                       extract="reasoning-gym")
    assert plain.samples["correct"].tolist() == [False, True]
    assert fixed.samples["correct"].tolist() == [True, True]


def test_reasoning_gym_extraction_needs_its_scorer_and_a_task_name():
    samples = pd.DataFrame({"question_id": ["0"], "response": ["x"]})
    with pytest.raises(ValueError) as e:
        rs.rescore(samples, {"0": "1"}, extract="reasoning-gym")
    assert e.value.param == "extract" and e.value.value == "reasoning-gym"

    class Task:
        def score_answer(self, answer, entry):
            return 1.0

    with pytest.raises(ValueError) as e:
        rs.rescore(samples, {"0": {"answer": "1"}}, scorer="reasoning-gym", task=Task(),
                   extract="reasoning-gym")
    assert e.value.param == "task"
