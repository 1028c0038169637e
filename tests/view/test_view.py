"""`envgym view`: engine trajectories → one HTML page, checked in headless Chromium.

The browser tests read the page's DOM after its script ran (`--dump-dom`), so what is
asserted is what a researcher sees: the advantage in each token's tooltip, the untrained
observation marking, the failure banner.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from envgym.trajectory import read_trajectories

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="Debian's `chromium` is not installed "
                                   "(.ci/run installs it: apt-get install -y chromium)")
TS_KWARGS = ('{ series_length = 512, sketch_points = 4, zoom_points = 4, max_rounds = 1, '
             'tool_format = "tag" }')


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    from envgym.agents.tiny import build_tiny_model

    return Path(build_tiny_model(tmp_path_factory.mktemp("m") / "m", hidden_size=48, layers=1,
                                 include_envs=False))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "envgym.cli", *args], env=ENV, text=True,
                          capture_output=True, timeout=600)


def _train(tmp: Path, model: Path, env: str, kwargs: str, credit: list[str]) -> Path:
    out = tmp / "run"
    cfg = tmp / "train.toml"
    cfg.write_text(f"""
seed = 1
output_dir = "{out}"
steps = 2
checkpoint_every = 0
credit = {json.dumps(credit)}
[model]
policy = "{model}"
[[envs]]
id = "{env}"
kwargs = {kwargs}
train_seeds = [0, 1000]
eval_seeds = [5000, 5002]
[rollout]
group_size = 4
tasks_per_step = 1
max_turns = 2
max_tokens = 8
temperature = 1.5
eval_episodes = 1
[log]
tensorboard = false
progress = false
trajectories = true
""")
    r = subprocess.run([sys.executable, "-m", "envgym.agents.trainer", str(cfg)], env=ENV,
                       text=True, capture_output=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return out


def _dom(page: Path, fragment: str, tmp: Path) -> str:
    """The page's DOM after its script ran, in a Chromium with every proxy pointed at a
    closed port: a page that needed the network would fail to render."""
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        "--proxy-server=127.0.0.1:9", f"--user-data-dir={tmp / 'chrome'}",
                        "--virtual-time-budget=5000", "--dump-dom", f"{page.as_uri()}#{fragment}"],
                       capture_output=True, text=True, timeout=120)
    assert 'data-ready="1"' in r.stdout, r.stderr[-2000:]
    return r.stdout


def _screenshot(page: Path, fragment: str, png: Path, tmp: Path) -> None:
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--hide-scrollbars",
                    f"--user-data-dir={tmp / 'chrome'}", "--window-size=1280,860",
                    "--virtual-time-budget=5000", f"--screenshot={png}",
                    f"{page.as_uri()}#{fragment}"], capture_output=True, timeout=120, check=True)


TOKEN = re.compile(r'<span class="(tok[^"]*)" data-k="(\d+)" data-adv="([^"]*)" data-lp="([^"]*)"'
                   r' data-trained="(\d)" title="([^"]*)"')


def _tokens(dom: str, episode_html: str | None = None) -> list[tuple]:
    return [(m.group(1), int(m.group(2)), m.group(3), m.group(4), m.group(5),
             html.unescape(m.group(6))) for m in TOKEN.finditer(episode_html or dom)]


def _episode_part(dom: str) -> str:
    return dom[dom.index('id="episode"'):]


def _first_with_tokens(trajs) -> int:
    return next(i for i, t in enumerate(trajs)
                if t.meta.get("credit") and any(x.action_token_ids for x in t.turns))


@needs_browser
def test_training_run_view_shows_the_advantages_the_trainer_used(tmp_path, model):
    run = _train(tmp_path, model, "envgym/TimeSeries-v0", TS_KWARGS, ["grpo"])
    r = _cli("view", str(run))
    assert r.returncode == 0, r.stderr
    page = run / "view.html"
    text = page.read_text()
    assert not re.search(r'(src|href)="(https?:)?//', text), "the page must not load anything"

    trajs = [t for f in sorted((run / "trajectories").glob("step_*.jsonl"))
             for t in read_trajectories(f)]
    i = _first_with_tokens(trajs)
    dom = _dom(page, f"ep={i}", tmp_path)
    toks = _tokens(dom, _episode_part(dom))
    stored = trajs[i].meta["credit"]["advantages"]
    expected = [a for turn_adv in stored for a in turn_adv]
    assert len(toks) == len(expected) > 0
    for (_, _, adv, lp, trained, title), want in zip(toks, expected):
        assert float(adv) == pytest.approx(want, abs=1e-9)
        assert f"advantage: {want:.4f}" in title
        assert trained == "1"
    lps = [x for t in trajs[i].turns for x in t.action_logprobs]
    assert [float(t[3]) for t in toks] == pytest.approx(lps, abs=1e-4)
    # observations are shown and marked untrained
    assert re.search(r'class="obs untrained" data-trained="0"', _episode_part(dom))
    _screenshot(page, f"ep={i}", tmp_path / "view.png", tmp_path)
    assert (tmp_path / "view.png").stat().st_size > 10_000


@needs_browser
def test_credit_option_recomputes_with_the_trainers_functions(tmp_path, model):
    from envgym.agents.credit import compute_credit

    rollouts = tmp_path / "ts.jsonl"
    r = _cli("rollout", "--env", "envgym/TimeSeries-v0", "--policy", f"hf:{model}",
             "--episodes", "2", "--group-size", "4", "--out", str(rollouts),
             "--env-arg", "series_length=512", "--env-arg", "max_rounds=1",
             "--env-arg", "tool_format=tag")
    assert r.returncode == 0, r.stderr[-3000:]
    trajs = list(read_trajectories(rollouts))
    # make the groups informative: a real reward spread in the first group
    trajs[0].turns[-1].reward += 1.0
    trajs[1].turns[-1].reward -= 0.5
    from envgym.trajectory import write_trajectories

    write_trajectories(rollouts, trajs)
    page = tmp_path / "view.html"
    r = _cli("view", str(rollouts), "--credit", "grpo", "--out", str(page))
    assert r.returncode == 0, r.stderr
    batch = compute_credit(trajs, ["grpo"])
    dom = _dom(page, "ep=0", tmp_path)
    toks = _tokens(dom, _episode_part(dom))
    want = np.concatenate(batch.advantages[0])
    assert want.size and np.abs(want).max() > 0.1
    assert [float(t[2]) for t in toks] == pytest.approx(want.tolist(), abs=1e-9)
    assert "background: rgb(" in _episode_part(dom)  # coloured on the diverging scale


@needs_browser
def test_failed_episode_and_torn_line_are_shown_not_hidden(tmp_path):
    rollouts = tmp_path / "ts.jsonl"
    r = _cli("rollout", "--env", "envgym/TimeSeries-v0", "--policy", "scripted:heuristic",
             "--episodes", "3", "--out", str(rollouts))
    assert r.returncode == 0, r.stderr[-2000:]
    trajs = list(read_trajectories(rollouts))
    trajs[1].error = "TimeoutError: step exceeded 30 s"
    from envgym.trajectory import write_trajectories

    write_trajectories(rollouts, trajs)
    with open(rollouts, "a") as f:
        f.write('{"schema_version": 1, "env_id": "envgym/Time')  # a crash mid-write
    page = tmp_path / "v.html"
    r = _cli("view", str(rollouts), "--out", str(page))
    assert r.returncode == 0, r.stderr
    dom = _dom(page, "ep=1", tmp_path)
    assert 'id="episode-error"' in dom and "TimeoutError" in dom
    assert 'id="unreadable-box"' in dom and "torn last line" in dom
    summary = dict(re.findall(r'<tr data-key="([^"]+)"><td>[^<]*</td><td>([^<]*)</td>', dom))
    assert summary["failed"] == "1" and summary["completed"] == "2"
    assert summary["unreadable records"] == "1"


def test_view_of_a_missing_file_is_a_clear_error(tmp_path):
    r = _cli("view", str(tmp_path / "nope.jsonl"))
    assert r.returncode != 0
    assert "does not" in r.stderr and "exist" in r.stderr and "Traceback" not in r.stderr


def test_page_data_escapes_script_breakers():
    from envgym.agents.view import RunData, build_page, page_data
    from envgym.trajectory import Trajectory, Turn

    t = Trajectory(env_id="x", turns=[Turn(action="</script><script>alert(1)</script>")])
    page = build_page(page_data(RunData([t], "mem")))
    assert "</script><script>alert(1)" not in page
    blob = page.split('id="data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(blob)["episodes"][0]["turns"][0]["action"].startswith("</script>")
