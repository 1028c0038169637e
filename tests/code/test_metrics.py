from envgym.environments.code.metrics import pass_at_k, summarize_outcomes


def test_pass_at_k_hand_computed():
    assert pass_at_k(5, 2, 2) == 1 - 3 / 10  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(4, 0, 1) == 0.0 and pass_at_k(4, 4, 3) == 1.0
    assert pass_at_k(4, 1, 1) == 0.25


def test_summarize_groups_by_task():
    outcomes = [
        {"task_id": "a", "final_pass": True, "first_attempt_pass": False, "rounds": 2, "verdict": "AC", "success": True, "score": 1.0},
        {"task_id": "a", "final_pass": False, "first_attempt_pass": False, "rounds": 4, "verdict": "WA", "success": False, "score": 0.0},
        {"task_id": "b", "final_pass": False, "first_attempt_pass": False, "rounds": 1, "verdict": "TLE", "success": False, "score": 0.0},
        {"task_id": "b", "final_pass": False, "first_attempt_pass": True, "rounds": 1, "verdict": "WA", "success": False, "score": 0.0},
    ]
    m = summarize_outcomes(outcomes)
    assert m["pass@1"] == (0.5 + 0.0) / 2 and m["pass@2"] == (1.0 + 0.0) / 2
    assert "pass@4" not in m and m["rounds"] == 2.0
    assert m["first_attempt_pass"] == 0.25 and m["final_pass"] == 0.25 and m["refinement_gain"] == 0.0
    assert m["verdict/WA"] == 0.5 and m["verdict/AC"] == 0.25 and m["verdict/TLE"] == 0.25
