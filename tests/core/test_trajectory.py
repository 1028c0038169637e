import warnings

import pytest

from envgym.trajectory import Trajectory, TrajectoryWriter, Turn, read_trajectories, write_trajectories


def _traj(i: int) -> Trajectory:
    return Trajectory(env_id="e/X-v0", task_id=f"t{i}", seed=i,
                      turns=[Turn(action="a", reward=float(i), obs_token_ids=[1, 2], action_token_ids=[3])],
                      outcome={"success": i % 2 == 0})


def test_round_trip_keeps_every_field(tmp_path):
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        for i in range(3):
            w.write(_traj(i))
    back = list(read_trajectories(path))
    assert back == [_traj(i) for i in range(3)]
    assert back[2].total_reward == 2.0 and back[2].success and back[0].schema_version == 1


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        w.write(_traj(0))
        w.write(_traj(1))
    with open(path, "a") as f:
        f.write(_traj(2).model_dump_json()[:40])  # the crash happened mid-write
    with pytest.warns(UserWarning, match="torn last line"):
        back = list(read_trajectories(path))
    assert [t.task_id for t in back] == ["t0", "t1"]


def test_corruption_in_the_middle_is_an_error_not_silent_loss(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(_traj(0).model_dump_json() + "\n{garbage\n" + _traj(1).model_dump_json() + "\n")
    with pytest.raises(ValueError):
        list(read_trajectories(path))


def test_whole_file_write_is_atomic(tmp_path):
    path = tmp_path / "t.jsonl"
    write_trajectories(path, [_traj(0)])
    assert not (tmp_path / "t.jsonl.tmp").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(read_trajectories(path))) == 1
