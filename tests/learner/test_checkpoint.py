import torch

from envgym.agents.checkpoint import load_latest, restore_rng, save_checkpoint


def test_checkpoint_is_atomic_and_keeps_the_newest(tmp_path):
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, step, {"w": torch.full((2,), float(step))}, keep=2)
    assert sorted(p.name for p in tmp_path.glob("step_*")) == ["step_0000002", "step_0000003"]
    state = load_latest(tmp_path)
    assert state["step"] == 3 and state["w"].tolist() == [3.0, 3.0]
    # a torn write (temp dir left behind, pointer to a missing dir) falls back to the newest
    (tmp_path / ".tmp_step_0000004").mkdir()
    (tmp_path / "latest").write_text("step_0000009")
    assert load_latest(tmp_path)["step"] == 3


def test_rng_state_round_trips(tmp_path):
    torch.manual_seed(0)
    save_checkpoint(tmp_path, 1, {})
    expected = torch.rand(3)
    torch.rand(5)
    restore_rng(load_latest(tmp_path)["rng"])
    assert torch.equal(torch.rand(3), expected)
