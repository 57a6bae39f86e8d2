"""AppTest for the self-check page: the URL seed reproduces the set, answers are URL-bound, a right
answer
scores, a wrong one shows the answer and the working, and a new set clears the old answers."""

import pytest

from core import quiz
from tests.test_pages import assert_clean, chart_specs, run_app

PAGE = "app_pages/self_check.py"


def prompts(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def board_title(at) -> str:
    return next(
        s["layout"]["title"]["text"]
        for s in chart_specs(at)
        if s["layout"]["title"]["text"].startswith("Set ")
    )


def test_seed_in_the_url_reproduces_the_set():
    at = run_app(PAGE, {"seed": "17"})
    assert_clean(at)
    body = prompts(at)
    assert all(q.prompt in body for q in quiz.questions(17))
    assert at.slider(key="seed").value == 17
    assert board_title(at) == "Set 17: 0 right of 8 (0 answered)"
    # before any answer the board is the set's map, not a grey block: white boxes, Q numbers
    (board,) = [s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Set ")]
    shown = [t for t in board["data"] if any(t["x"])]
    assert [t["name"] for t in shown] == ["to answer"]
    assert shown[0]["marker"]["color"] == "white"
    assert sorted(" · ".join(shown[0]["text"]).replace(" · ", " ").split()) == sorted(
        f"Q{i}" for i in range(1, 9)
    )


def test_the_fix_question_does_not_give_away_the_bubble_answer():
    for seed in (1, 2, 3, 17, 400):
        qs = {q.key: q for q in quiz.questions(seed)}
        sched, p, m = qs["bubble"].pipeline
        prompt = qs["fix"].prompt
        assert f"P = {p}, M = {m}" in prompt
        # a bubble share (any "x.y%") in question 7 would give question 6's answer away
        assert "%" not in prompt and f"{qs['bubble'].answer:.1f}" not in prompt, prompt


def test_answers_have_no_stepper_buttons_and_the_lab_ships():
    at = run_app(PAGE, {"seed": "3"})
    css = "\n".join(m.value for m in at.markdown if "<style>" in m.value)
    assert "stNumberInputStepUp" in css and "display: none" in css
    (button,) = at.get("download_button")
    assert button.proto.label.startswith("Download the lab (splitlab-lab.zip)")
    assert any("LAB_MODULE=solution pytest test_lab.py -v" in c.value for c in at.code)


def test_right_answer_scores_and_wrong_answer_explains():
    qs = {q.key: q for q in quiz.questions(4)}
    at = run_app(PAGE, {"seed": "4"})
    at.number_input(key="steps").set_value(qs["steps"].answer).run()
    assert [s.value for s in at.success if s.value == "Correct."] == ["Correct."]
    assert qs["steps"].explanation in prompts(at)
    at.number_input(key="sent").set_value(qs["sent"].answer * 1.5).run()
    assert any(f"the answer is {qs['sent'].answer:,.4g} GB" in e.value for e in at.error)
    assert qs["sent"].explanation in prompts(at)
    assert board_title(at) == "Set 4: 1 right of 8 (2 answered)"
    board = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("Set "))
    by_name = {t["name"]: t["text"][0] for t in board["data"]}  # row 0: the ring's questions
    assert by_name == {"right": "Q1", "wrong": "Q2", "to answer": ""}
    assert at.session_state["_quiz_first_tries"] == {"4:steps": True, "4:sent": False}
    at.number_input(key="sent").set_value(
        qs["sent"].answer
    ).run()  # a later fix counts in the set...
    assert board_title(at) == "Set 4: 2 right of 8 (2 answered)"
    assert at.session_state["_quiz_first_tries"]["4:sent"] is False  # ...but not as a first try


def test_multiple_choice_and_the_bubble_timeline():
    qs = {q.key: q for q in quiz.questions(9)}
    at = run_app(PAGE, {"seed": "9"})
    assert at.selectbox(key="split").value == quiz.BLANK
    at.selectbox(key="split").set_value(qs["split"].answer).run()
    at.number_input(key="bubble").set_value(qs["bubble"].answer).run()
    assert len([s for s in at.success if s.value == "Correct."]) == 2
    assert len(chart_specs(at)) == 2  # the scoreboard and the simulated Gantt of the asked pipeline
    wrong = next(c for c in qs["fix"].choices if c != qs["fix"].answer)
    at.selectbox(key="fix").set_value(wrong).run()
    assert any("the answer is more micro-batches" in e.value for e in at.error)


@pytest.mark.parametrize("key", ["steps", "weight", "split", "saved"])
def test_answers_are_url_bound(key):
    q = {q.key: q for q in quiz.questions(21)}[key]
    at = run_app(
        PAGE, {"seed": "21", key: q.answer if isinstance(q.answer, str) else repr(q.answer)}
    )
    assert_clean(at)
    assert [s.value for s in at.success if s.value == "Correct."] == ["Correct."]


def test_new_questions_moves_to_the_next_seed_and_clears_answers():
    qs = quiz.questions(6)
    at = run_app(PAGE, {"seed": "6"})
    at.number_input(key="steps").set_value(qs[0].answer).run()
    at.button[0].click().run()
    assert_clean(at)
    assert at.slider(key="seed").value == 7
    assert (
        at.number_input(key="steps").value is None and at.selectbox(key="split").value == quiz.BLANK
    )
    assert all(q.prompt in prompts(at) for q in quiz.questions(7))
    assert board_title(at) == "Set 7: 0 right of 8 (0 answered)"
    at.slider(key="seed").set_value(1000).run()
    at.button[0].click().run()
    assert at.slider(key="seed").value == 1  # wraps round after the slider's maximum


def test_moving_the_seed_slider_clears_answers_too():
    qs = quiz.questions(2)
    at = run_app(PAGE, {"seed": "2"})
    at.number_input(key="steps").set_value(qs[0].answer).run()
    at.slider(key="seed").set_value(3).run()
    assert at.number_input(key="steps").value is None


def test_decimal_units_change_the_questions_units():
    at = run_app(PAGE, {"seed": "5", "mem": "GB"})
    qs = quiz.questions(5, "decimal")
    assert all(q.prompt in prompts(at) for q in qs)
    assert {n.label for n in at.number_input} >= {"Your answer (GB)", "Your answer (MB)"}
