"""Self-check questions: seeded and reproducible, answers equal to the hand formulas, tolerant
checking.
"""

import math
import re
from fractions import Fraction

import pytest

from core import quiz

SEEDS = range(1, 41)


def _num(text: str, name: str) -> int:
    """An integer stated in a prompt, e.g. 'N = 12' or 'P = 8'."""
    return int(re.search(rf"{name} = (\d[\d,]*)", text).group(1).replace(",", ""))


def by_key(seed: int, units: str = "binary") -> dict[str, quiz.Question]:
    return {q.key: q for q in quiz.questions(seed, units)}


def test_same_seed_same_questions_and_different_seeds_differ():
    assert quiz.questions(7) == quiz.questions(7)
    sets = {tuple((q.prompt, q.answer) for q in quiz.questions(s)) for s in SEEDS}
    assert len(sets) == len(SEEDS)
    assert [q.key for q in quiz.questions(3)] == list(quiz.KEYS)
    assert {q.goal for q in quiz.questions(3)} == set(quiz.GOALS)  # every learning goal, every set


@pytest.mark.parametrize("bad", [-1, 1.5, True, "x"])
def test_bad_seed_is_a_clear_error(bad):
    with pytest.raises((ValueError, TypeError)):
        quiz.questions(bad)


@pytest.mark.parametrize("seed", SEEDS)
def test_ring_answers_are_2_n_minus_1_steps_and_2s_n_minus_1_over_n_bytes(seed):
    q = by_key(seed)
    n = _num(q["steps"].prompt, "N")
    assert q["steps"].answer == 2 * (n - 1)
    size_gib = float(re.search(r"\*\*([\d.]+) (GiB|MiB)\*\*", q["sent"].prompt).group(1))
    unit = re.search(r"\*\*([\d.]+) (GiB|MiB)\*\*", q["sent"].prompt).group(2)
    s = size_gib if unit == "GiB" else size_gib / 1024
    assert q["sent"].unit == "GiB" and q["sent"].answer == pytest.approx(2 * s * (n - 1) / n)


@pytest.mark.parametrize("seed", SEEDS)
def test_data_parallel_weight_is_shard_size_over_batch(seed):
    q = by_key(seed)["weight"]
    sizes = [int(x) for x in re.search(r"n = \(([\d, ]+)\)", q.prompt).group(1).split(",")]
    k = int(re.search(r"w_(\d+)", q.prompt).group(1))
    assert sum(sizes) == int(re.search(r"batch of (\d+)", q.prompt).group(1))
    assert q.answer == pytest.approx(float(Fraction(sizes[k], sum(sizes))))


@pytest.mark.parametrize("seed", SEEDS)
def test_tensor_parallel_choice_and_message_bytes(seed):
    q = by_key(seed)
    mc = q["split"]
    assert set(mc.choices) == {"column-parallel A", "row-parallel B", "both", "neither"}
    assert mc.answer == ("row-parallel B" if "forward pass" in mc.prompt else "column-parallel A")
    msg = q["msg"]
    h, b, s = (_num(msg.prompt, x) for x in ("h", "b", "s"))
    assert msg.unit == "MiB" and msg.answer == pytest.approx(
        b * s * h * 2 / 2**20
    )  # b·s·h elements × 2 B


@pytest.mark.parametrize("seed", SEEDS)
def test_pipeline_bubble_is_p_minus_1_over_m_plus_p_minus_1(seed):
    q = by_key(seed)
    p, m = _num(q["bubble"].prompt, "P"), _num(q["bubble"].prompt, "M")
    assert q["bubble"].answer == pytest.approx(100 * (p - 1) / (m + p - 1))
    assert q["bubble"].pipeline[1:] == (p, m)
    fix = q["fix"]
    assert (
        fix.answer == "more micro-batches" and fix.answer in fix.choices and len(fix.choices) == 4
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_zero_savings_by_stage(seed):
    q = by_key(seed, "decimal")["saved"]
    psi = float(re.search(r"\*\*([\d.]+)B\*\*", q.prompt).group(1)) * 1e9
    nd, k = _num(q.prompt, "N_d"), int(re.search(r"ZeRO-(\d)\*\*", q.prompt).group(1))
    shard = math.ceil(round(psi) / nd)
    # ZeRO paper Sec. 5: stage 1 shards the 12Ψ optimizer state, 2 also the 2Ψ grads, 3 also the 2Ψ
    # weights.
    stage = {1: 4 * psi + 12 * shard, 2: 2 * psi + 14 * shard, 3: 16 * shard}[k]
    assert q.unit == "GB" and q.answer == pytest.approx((16 * psi - stage) / 1e9)


def test_units_follow_the_memory_convention():
    b, d = by_key(5, "binary"), by_key(5, "decimal")
    assert (b["sent"].unit, b["msg"].unit, b["saved"].unit) == ("GiB", "MiB", "GiB")
    assert (d["sent"].unit, d["msg"].unit, d["saved"].unit) == ("GB", "MB", "GB")
    assert d["msg"].answer == pytest.approx(b["msg"].answer * 2**20 / 1e6)


def test_check_tolerance_and_blank():
    q = by_key(1)
    num, pct, steps, mc = q["sent"], q["bubble"], q["steps"], q["split"]
    assert quiz.check(num, None) is None and quiz.check(mc, quiz.BLANK) is None
    assert quiz.check(num, num.answer * 1.019) and not quiz.check(num, num.answer * 1.03)
    assert quiz.check(pct, pct.answer + 0.49) and not quiz.check(pct, pct.answer + 0.6)
    assert quiz.check(steps, steps.answer) and not quiz.check(steps, steps.answer + 1)
    assert (
        not quiz.check(num, float("nan"))
        and not quiz.check(num, float("inf"))
        and not quiz.check(num, "abc")
    )
    assert quiz.check(mc, mc.answer) and not quiz.check(
        mc, next(c for c in mc.choices if c != mc.answer)
    )


def test_score_counts_right_and_answered():
    qs = quiz.questions(2)
    answers = {"steps": qs[0].answer, "sent": -1.0, "split": qs[3].answer}
    assert quiz.score(qs, answers) == (2, 3)
    assert quiz.score(qs, {}) == (0, 0)


def test_explanations_carry_the_computed_answer():
    q = by_key(11)
    assert f"= {int(q['steps'].answer)}." in q["steps"].explanation
    assert f"{q['bubble'].answer:.2f}%" in q["bubble"].explanation
