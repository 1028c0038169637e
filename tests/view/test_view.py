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


CONFIGS = Path(__file__).resolve().parents[2] / "agents" / "configs"


def _scaled(name: str, model: Path, out: Path, extra: dict[str, str]) -> Path:
    """A shipped config with only its sizes and model changed (the method settings stay)."""
    text = (CONFIGS / name).read_text()
    edits = {r'policy = ".*"': f'policy = "{model}"', r'backend = "vllm"': 'backend = "hf"',
             r'dtype = "bfloat16"': 'dtype = "float32"',
             r"gradient_checkpointing = true": "gradient_checkpointing = false",
             r'output_dir = ".*"': f'output_dir = "{out}"', r"\nsteps = \d+": "\nsteps = 1",
             r"checkpoint_every = \d+": "checkpoint_every = 0",
             r"max_tokens = \d+": "max_tokens = 48", r"eval_episodes = \d+": "eval_episodes = 1",
             r"tensorboard = \w+": "tensorboard = false\nprogress = false",
             r"eval_every = \d+": "eval_every = 0", r"minibatches = \d+": "minibatches = 1",
             r"grad_accum = \d+": "grad_accum = 1"}
    for pattern, repl in edits.items():  # where the config has them
        text = re.sub(pattern, repl, text)
    for pattern, repl in extra.items():  # what this test insists on
        text, n = re.subn(pattern, repl, text)
        assert n, f"{pattern!r} not in {name}"
    path = out.parent / f"scaled_{name}"
    path.write_text(text)
    return path


def _check_page_against_stored(run: Path, tmp: Path, pick, shot: str | None = None) -> dict:
    """Open the view of `run` on the episode `pick` chooses; every token's tooltip must show
    the advantage the trainer stored for it. Returns what was checked."""
    r = _cli("view", str(run))
    assert r.returncode == 0, r.stderr
    page = run / "view.html"
    assert not re.search(r'(src|href)="(https?:)?//', page.read_text()), "no network loads"
    trajs = [t for f in sorted((run / "trajectories").glob("step_*.jsonl"))
             for t in read_trajectories(f)]
    i = pick(trajs)
    dom = _dom(page, f"ep={i}", tmp)
    part = _episode_part(dom)
    toks = _tokens(dom, part)
    credit = trajs[i].meta["credit"]
    expected = [(a, trained) for adv, trained in zip(credit["advantages"], credit["trained"])
                for a in adv]
    assert len(toks) == len(expected) > 0
    for (cls, _, adv, lp, trained, title), (want, turn_trained) in zip(toks, expected):
        assert float(adv) == pytest.approx(want, abs=1e-9)
        assert f"advantage: {want:.4f}" in title
        assert trained == ("1" if turn_trained else "0")
    lps = [x for t in trajs[i].turns for x in t.action_logprobs]
    assert [float(t[3]) for t in toks] == pytest.approx(lps, abs=1e-4)
    assert re.search(r'class="obs untrained" data-trained="0"', part)  # observations untrained
    if shot:
        _screenshot(page, f"ep={i}", Path(shot), tmp)
        assert Path(shot).stat().st_size > 10_000
    return {"traj": trajs[i], "tokens": toks, "dom": part}


@needs_browser
def test_artist_run_view_shows_the_hierarchical_advantages_used(tmp_path, model, monkeypatch):
    """The shipped ARTIST config (scaled to the tiny model): controller and reasoner turns,
    each token's tooltip the advantage `hierarchical` gave it."""
    from envgym.agents.config import load_config

    from search_token_policies import WritingPolicy
    from envgym.agents import trainer

    def zoom_then_guess(prompt: str, rng) -> str:
        """One valid zoom, then a random letter: the reasoner samples disagree."""
        if "<zoom>[0, 100]</zoom>" not in prompt:
            return "<think>look</think><zoom>[0, 100]</zoom>"
        return f"<think>so</think><answer>{'AB'[int(rng.integers(2))]}</answer>"

    real = trainer.make_rollout_policy
    monkeypatch.setattr(trainer, "make_rollout_policy",
                        lambda *a, **k: WritingPolicy(real(*a, **k), zoom_then_guess, seed=3))
    cfg = load_config(_scaled("timeseries_artist_cpu.toml", model, tmp_path / "run",
                                    {r'warm_start = "sft"': 'warm_start = "none"',
                                     r"reasoner_samples = \d+": "reasoner_samples = 3",
                                     r"tasks_per_step = \d+": "tasks_per_step = 1",
                                     r"max_tokens = \d+": "max_tokens = 10"}))
    cfg.log.trajectories = True
    trainer.train(cfg, eval_at_start=False)

    def reasoner_with_signal(trajs):
        """An episode whose trained reasoner turn got a non-zero advantage."""
        return next(i for i, t in enumerate(trajs) if t.meta.get("credit") and any(
            x.role == "reasoner" and trained and any(abs(a) > 0 for a in adv)
            for x, adv, trained in zip(t.turns, t.meta["credit"]["advantages"],
                                       t.meta["credit"]["trained"])))

    shot = os.environ.get("ENVGYM_VIEW_SCREENSHOT") or str(tmp_path / "view.png")
    seen = _check_page_against_stored(tmp_path / "run", tmp_path, reasoner_with_signal, shot)
    roles = re.findall(r'<span class="badge">(controller|reasoner)</span>', seen["dom"])
    assert "controller" in roles and "reasoner" in roles


@needs_browser
def test_ig_run_view_outlines_query_spans_with_their_credit(tmp_path, model, monkeypatch):
    """The shipped IG-Search config (scaled): query-span tokens outlined, IG-modulated
    advantages in their tooltips."""
    from search_token_policies import WritingPolicy, ig_searcher
    from envgym.agents import trainer
    from envgym.agents.config import load_config

    real = trainer.make_rollout_policy
    monkeypatch.setattr(trainer, "make_rollout_policy",
                        lambda *a, **k: WritingPolicy(real(*a, **k), ig_searcher, seed=1))
    cfg = load_config(_scaled("search_qwen05b.toml", model, tmp_path / "run",
                                    {r"tasks_per_step = \d+": "tasks_per_step = 2"}))
    cfg.log.trajectories, cfg.steps = True, 1
    trainer.train(cfg, eval_at_start=False)

    def with_spans(trajs):
        return next(i for i, t in enumerate(trajs) if t.meta.get("credit")
                    and any(s.token_start is not None for x in t.turns for s in x.spans))

    seen = _check_page_against_stored(tmp_path / "run", tmp_path, with_spans)
    outlined = [t for t in seen["tokens"] if "inspan" in t[0]]
    assert outlined and all("span: " in t[5] for t in outlined)


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
    said = " ".join(r.stderr.split())  # rich wraps long lines
    assert "does not exist" in said and "Traceback" not in said


def test_page_data_escapes_script_breakers():
    from envgym.agents.view import RunData, build_page, page_data
    from envgym.trajectory import Trajectory, Turn

    t = Trajectory(env_id="x", turns=[Turn(action="</script><script>alert(1)</script>")])
    page = build_page(page_data(RunData([t], "mem")))
    assert "</script><script>alert(1)" not in page
    blob = page.split('id="data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(blob)["episodes"][0]["turns"][0]["action"].startswith("</script>")


@needs_browser
def test_debate_agents_and_slate_siblings_render_side_by_side(tmp_path, model):
    from search_token_policies import WritingPolicy
    from envgym.agents.credit import compute_credit
    from envgym.policy import SamplingParams, load_policy
    from envgym.tree import slate_trees
    from envgym.trajectory import write_trajectories

    debate = tmp_path / "debate.jsonl"
    r = _cli("rollout", "--env", "envgym/Debate-v0", "--policy", "scripted:oracle",
             "--episodes", "1", "--out", str(debate))
    assert r.returncode == 0, r.stderr[-2000:]
    assert _cli("view", str(debate)).returncode == 0
    dom = _episode_part(_dom(debate.with_suffix(".html"), "ep=0", tmp_path))
    assert 'id="family"' in dom and "agents' turns side by side" in dom
    assert re.findall(r"<h3>(agent_\d)", dom) == ["agent_0", "agent_1"]

    policy = WritingPolicy(load_policy(f"hf:{model}", device="cpu", threads=1), lambda text, rng: (
        f"<think>look</think><search> {['alpha', 'zzz', 'city'][int(rng.integers(3))]} </search>"))
    kids = slate_trees("envgym/Search-v0", policy, first_seed=4, n_tasks=1, k=3, budget=1,
                       eta=0.0, env_kwargs={"judge": "rule"},
                       sampling=SamplingParams(max_tokens=32, seed=0))
    slate = tmp_path / "slate.jsonl"
    write_trajectories(slate, kids)
    page = tmp_path / "slate.html"
    assert _cli("view", str(slate), "--credit", "slate", "--out", str(page)).returncode == 0
    first = next(i for i, t in enumerate(kids) if t.meta["step"] == 0)
    dom = _episode_part(_dom(page, f"ep={first}", tmp_path))
    assert "siblings of this step side by side" in dom
    assert len(re.findall(r"<h3>sibling \d", dom)) == 3
    batch = compute_credit(kids, ["slate"])
    want = [float(a) for adv in batch.advantages[first] for a in adv]
    got = [float(t[2]) for t in _tokens(dom)[:len(want)]]
    assert got == pytest.approx(want, abs=1e-9)


@needs_browser
def test_state_links_use_the_anchor_state_the_action_was_taken_from(tmp_path):
    """GiGPO groups turn t by turns[t-1].state_key. Episode 0's action at turn 0 changed
    nothing (both its turns end in state s1), so linking by `state_key` would pair its own two
    turns; by anchor, turn 0 pairs with episode 1's turn 0 (both start from the task's
    initial state) and turn 1 (taken from s1) is unique in the group."""
    from envgym.trajectory import Trajectory, Turn, write_trajectories

    def episode(keys):
        turns = [Turn(observation=[{"role": "user", "content": f"obs {k}"}], action=f"act {k}",
                      reward=0.0, state_key=k) for k in keys]
        return Trajectory(env_id="envgym/TimeSeries-v0", task_id="t0", seed=0, policy="x",
                          turns=turns, final_observation=[], terminated=True)

    path = tmp_path / "two.jsonl"
    write_trajectories(path, [episode(["s1", "s1"]), episode(["s2", "s3"])])
    page = tmp_path / "two.html"
    assert _cli("view", str(path), "--out", str(page)).returncode == 0
    dom = _episode_part(_dom(page, "ep=0", tmp_path))

    def links(turn: int) -> tuple[list[str], str]:
        part = dom[dom.index(f'id="turn-0-{turn}"'):]
        part = part[part.index('class="samestate"'):]
        box = part[:part.index("</div>")]
        return re.findall(r'href="#ep=(\d+&amp;turn=\d+)"', box), box

    first, _ = links(0)
    second, box = links(1)
    assert first == ["1&amp;turn=0"]
    assert second == [] and "unique in its group" in box and "s1" in box


# ---- --credit on text-only rollouts, the colour scale, the opening episode (issue 26) ------

def _summary(dom: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-key="([^"]+)"><td>[^<]*</td><td>([^<]*)</td>', dom))


def _luminance(rgb: tuple[int, ...]) -> float:
    def lin(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@needs_browser
def test_credit_on_scripted_text_rollouts_tokenizes_and_opens_on_credit(tmp_path, model):
    """A scripted policy's rollouts carry text, no token ids: `--credit grpo --tokenizer`
    tokenizes the actions, runs the trainer's grpo on them, labels the summary with the chain,
    opens on the first episode whose credit is not all zero, and every coloured token's text
    stays legible on its cell (WCAG contrast >= 4.5 on both ends of the scale)."""
    from transformers import AutoTokenizer

    from envgym.agents.credit import compute_credit
    from envgym.trajectory import write_trajectories

    rollouts = tmp_path / "scripted.jsonl"
    r = _cli("rollout", "--env", "envgym/TimeSeries-v0", "--policy", "scripted:heuristic",
             "--episodes", "2", "--group-size", "3", "--out", str(rollouts),
             "--env-arg", "series_length=400")
    assert r.returncode == 0, r.stderr[-2000:]
    trajs = list(read_trajectories(rollouts))
    assert not any(t.action_token_ids for x in trajs for t in x.turns)  # text only
    flat = [t for t in trajs if t.group_id == trajs[0].group_id]
    for t in flat:  # the first group (in file order): no spread, so all-zero GRPO credit
        for x in t.turns:
            x.reward, x.reward_components = 0.0, {}
        t.turns[-1].reward = 0.5
    boosted = next(i for i, t in enumerate(trajs) if t.group_id != trajs[0].group_id)
    trajs[boosted].turns[-1].reward += 2.0  # the other group has a spread; this one leads it
    write_trajectories(rollouts, trajs)

    page = tmp_path / "v.html"
    r = _cli("view", str(rollouts), "--credit", "grpo", "--tokenizer", str(model),
             "--out", str(page))
    assert r.returncode == 0, r.stderr
    tok = AutoTokenizer.from_pretrained(model)
    for t in trajs:
        for turn in t.turns:
            turn.action_token_ids = tok.encode(turn.action, add_special_tokens=False)
    batch = compute_credit(trajs, ["grpo"])
    dom = _dom(page, "", tmp_path)
    assert _summary(dom)["credit"] == "computed here: grpo"
    part = _episode_part(dom)
    toks = _tokens(dom, part)
    shown = re.search(r'class="member[^"]*\bsel\b[^"]*"[^>]*data-ep="(\d+)"', dom)
    assert all(np.abs(np.concatenate(batch.advantages[trajs.index(t)])).max() == 0 for t in flat)
    assert shown and int(shown.group(1)) == boosted  # not episode 0, whose credit is all zero
    want = np.concatenate(batch.advantages[boosted])
    assert [float(t[2]) for t in toks] == pytest.approx(want.tolist(), abs=1e-9)
    assert want.max() > 0
    _assert_legible(part, len(toks))
    worst = int(np.argmin([np.concatenate(a).min() if a else 0 for a in batch.advantages]))
    assert np.concatenate(batch.advantages[worst]).min() < 0  # the other (blue) end
    _assert_legible(_episode_part(_dom(page, f"ep={worst}", tmp_path)), None)


def _assert_legible(part: str, n_tokens: int | None) -> None:
    styled = re.findall(r'style="background: rgb\((\d+), (\d+), (\d+)\); color: rgb\((\d+), '
                        r'(\d+), (\d+)\);"', part)
    assert styled and (n_tokens is None or len(styled) == n_tokens)
    for cell in styled:
        bg, fg = tuple(map(int, cell[:3])), tuple(map(int, cell[3:]))
        assert _contrast(bg, fg) >= 4.5, (bg, fg)


def test_credit_without_any_tokenizer_is_a_clear_error(tmp_path):
    rollouts = tmp_path / "scripted.jsonl"
    assert _cli("rollout", "--env", "envgym/TimeSeries-v0", "--policy", "scripted:random",
                "-n", "1", "-g", "2", "--out", str(rollouts),
                "--env-arg", "series_length=400").returncode == 0
    r = _cli("view", str(rollouts), "--credit", "grpo")
    assert r.returncode == 2
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("error:")]
    assert "no tokenizer was found" in line and "--tokenizer" in line
    assert "Traceback" not in r.stderr and not rollouts.with_suffix(".html").exists()
