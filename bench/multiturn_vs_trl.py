"""Whole multi-turn GRPO steps, generation included: envgym's trainer against TRL's own loop.

    python bench/multiturn_vs_trl.py [--steps 4] [--warmup 1] [--rounds 2] [--threads 1]
                                     [--tiny DIR]

The task is a calculator: "add up these 5 numbers with the `add` tool, a running total at a
time". Each episode makes 4 tool calls (`add(a, b)`, answered with `<tool_response>`) and a
fifth, final turn: 5 generations. Reward: per call, half a point for the right running total
and half for adding one of the numbers, over 4, so groups differ and both sides update.

* envgym: `envgym.agents.trainer.train` on `AddToolEnv` (a `TextEnv` written here), with the
  HF backend's defaults (KV reuse across turns, group-prompt prefill shared).
* TRL 1.16: `GRPOTrainer(environment_factory=AddToolTRL)`; the environment's `add` method is
  the tool, the tokenizer carries TRL's Qwen2.5 tool-calling chat template (TRL parses the
  `<tool_call>` JSON with its response schema), `max_tool_calling_iterations` = 4.

Both render the same tokens: envgym's system message is the exact text the Qwen2.5 template
renders for the `add` schema, tool results are `<|im_start|>user\\n<tool_response>...`.
A random tiny model never writes a tool call, so the tiny Qwen2 (fresh weights) is first
warm-started by a short supervised pass on scripted episodes (`--tiny DIR` caches it).

Same tool-failure semantics on both sides, so that turns per episode match: envgym's
environment runs the calls the way TRL's loop does (every `<tool_call>` JSON block of a turn
is called; an unknown tool, bad arguments or a fifth call answer `{'error': ...}` and the
episode goes on; a turn without a parseable call ends it; after 4 tool rounds the next
generation is the last). Both sides' turns (generations) per episode are reported.

Same on both sides: 4 tasks x 4 samples a step, 32 sampled tokens a turn (TRL:
`generation_kwargs.max_new_tokens`; its whole-completion budget is set high enough never to
cut), temperature 1, AdamW lr 1e-4, no KL, one optimiser step per generation, PPO clip
0.2 / 0.28, token-mean loss (TRL `dapo`). Runs alternate A B A B in one process; the first
`--warmup` steps of each run are left out. Reported per side: median step time, generation /
update split in wall and CPU seconds (`bench/trl_timing.py`), sampled tokens per step and
per second, turns and tool calls per episode; then the ratios, envgym over TRL at equal
episodes (16 a step on both sides). The goal (issue 41) is 2x. `--max-tokens-per-microbatch
0` runs envgym's update padded. Needs the `trl` extra (`pip install -e '.[trl]'`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

import envgym
from envgym.core import StepResult, TextEnv, system, user

sys.path.insert(0, str(Path(__file__).resolve().parent))
from learner_shapes import device_settings, mfu, parameters, reshape  # noqa: E402
from trl_timing import envgym_clock, ratios, summary, trl_clock, trl_seq_tokens  # noqa: E402

RUN = {"device": "cpu"}  # main() sets it from --device

ENV_ID = "bench/AddTool-v0"
PROMPTS, GROUP, MAX_TOKENS, LR = 4, 4, 32, 1e-4
CALLS = 4  # tool calls an episode; one more generation after the last result
_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)


def numbers(seed: int) -> list[int]:
    """The CALLS + 1 numbers of task `seed`."""
    return [int(x) for x in np.random.default_rng(seed).integers(1, 20, CALLS + 1)]


def task_text(seed: int) -> str:
    nums = ", ".join(map(str, numbers(seed)))
    return (f"Add up {nums} with the add tool: first the first two, then the running total "
            "and the next number.")


class Ledger:
    """The grading state both sides share: which calls were (running total, next number)."""

    def __init__(self, seed: int):
        self.nums, self.calls, self.right = numbers(seed), 0, 0.0

    def add(self, a: int, b: int) -> int:
        """Half a point for the right running total, half for adding one of the numbers
        (partial credit, so that the warm-started model's groups differ in reward)."""
        total = sum(self.nums[:self.calls + 1])
        self.right += 0.5 * (a == total) + 0.5 * (b in self.nums)
        self.calls += 1
        return a + b

    def reward(self) -> float:
        return self.right / CALLS


class AddToolTRL:
    """TRL's environment: `add` becomes the tool (schema from its hints and docstring)."""

    def __init__(self):
        self.ledger = Ledger(0)

    def reset(self, seed: int = 0, **_) -> None:
        self.ledger = Ledger(seed)

    def add(self, a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first integer.
            b: The second integer.

        Returns:
            The sum a + b.
        """
        if self.ledger.calls >= CALLS:
            raise ValueError("no more tool calls")
        return self.ledger.add(int(a), int(b))

    def get_reward(self) -> float:
        return self.ledger.reward()


def tools_system() -> str:
    """The system text TRL's Qwen2.5 template renders for the `add` tool (and no system).

    Rendered by transformers' own template engine, as TRL renders it (plain jinja2 would
    sort the schema's keys and give different tokens). Without TRL (`--envgym-only` on a
    machine where it cannot be installed), the same text as rendered once with TRL 1.16
    (`bench/addtool_system.txt`)."""
    from transformers.utils.chat_template_utils import _compile_jinja_template, get_json_schema
    try:
        from trl.chat_template_utils import qwen2_5_chat_template
    except ImportError:
        return (Path(__file__).resolve().parent / "addtool_system.txt").read_text()

    text = _compile_jinja_template(qwen2_5_chat_template).render(
        messages=[{"role": "user", "content": "x"}], tools=[get_json_schema(AddToolTRL().add)],
        add_generation_prompt=False)
    return text.split("<|im_start|>system\n", 1)[1].split("<|im_end|>", 1)[0]


SYSTEM = None  # filled by main() (needs TRL's template)


EXECUTED = [0]  # tool calls envgym's environments ran (read and reset once a step)


class AddToolEnv(TextEnv):
    """envgym's side: the same task, the same tool object and grader, and TRL's loop rules."""

    def __init__(self, max_turns: int = CALLS + 1):
        super().__init__(max_turns=max_turns)

    def _reset(self, seed, options):
        self.task_id, self.tool, self.rounds = f"add-{seed}", AddToolTRL(), 0
        self.tool.reset(seed=seed)
        return [system(SYSTEM or tools_system()), user(task_text(seed))], {}

    def _step(self, action):
        calls = parse_calls(action)
        if not calls or self.rounds >= CALLS:  # TRL: no tool call / iteration cap: done
            return StepResult([], {"correct_calls": self.tool.get_reward()}, terminated=True)
        self.rounds += 1
        EXECUTED[0] += len(calls)
        results = "\n".join(f"<tool_response>\n{call_tool(self.tool, c)}\n</tool_response>"
                            for c in calls)
        return StepResult([user(results)], {"correct_calls": 0.0}, terminated=False)


def parse_calls(text: str) -> list[dict]:
    """The turn's calls as TRL's `parse_response` reads them: every `<tool_call>` block, or
    none at all when any block is unclosed (a turn cut at its token budget) or not a JSON
    call (`name`, `arguments`): TRL then falls back to plain text, which ends the episode."""
    blocks = _CALL.findall(text)
    if len(blocks) != text.count("<tool_call>"):
        return []
    calls = []
    for block in blocks:
        try:
            call = json.loads(block)
        except ValueError:
            return []
        if not (isinstance(call, dict) and "name" in call
                and isinstance(call.get("arguments"), dict)):
            return []
        calls.append(call)
    return calls


def call_tool(tool: AddToolTRL, call: dict) -> str:
    """What TRL's loop answers a call with: the result, or `{'error': message}`."""
    try:
        if call["name"] != "add":
            raise ValueError(f"Tool {call['name']} not found.")
        result = tool.add(**call["arguments"])
    except Exception as e:  # noqa: BLE001 - as TRL: any failure becomes the tool's answer
        result = {"error": str(e)}
    return str(result)


if ENV_ID not in envgym.registry():
    envgym.register(ENV_ID, AddToolEnv, description="add numbers with a tool (benchmark task)")


# ---------------------------------------------------------------- warm start (tool format)

CALL_HEAD = '<tool_call>\n{"name": "add", "arguments": {"a": '
CALL_MID, CALL_TAIL = ', "b": ', '}}\n</tool_call>'
NOTE = "I add the running total and the next number.\n"


def call_text(a: int, b: int) -> str:
    return f"{NOTE}{CALL_HEAD}{a}{CALL_MID}{b}{CALL_TAIL}"


def scripted_episode(seed: int, rng: np.random.Generator) -> list[dict[str, str]]:
    """A conversation whose assistant turns are add calls (mostly right, some noise)."""
    nums = numbers(seed)
    total = nums[0]
    msgs = [system(SYSTEM), user(task_text(seed))]
    for k in range(CALLS + 1):
        a, b = (total, nums[k + 1]) if k < CALLS else (total, 0)
        if rng.random() < 0.2:
            a = int(rng.integers(1, 60))
        msgs.append({"role": "assistant", "content": call_text(a, b)})
        if k < CALLS:
            msgs.append(user(f"<tool_response>\n{a + b}\n</tool_response>"))
            total += nums[k + 1]
    return msgs


def build_model(out: Path, seed: int = 0) -> None:
    """The tiny Qwen2 of `envgym.agents.tiny`, its BPE also trained on this task's text.

    The stock tiny tokenizer never saw the tool schema, so the system prompt would cost ~535
    tokens (a real Qwen tokenizer: ~200). Training the BPE on the task's text brings it to a
    realistic length, and the call scaffold (`<tool_call>` JSON up to the numbers, and its
    closing braces) is one added token each, which the tiny model learns in a few dozen
    steps; counting closing braces of a nested JSON it does not (1/16 valid at temperature 1
    after 150 steps with the plain BPE). Both sides use this same tokenizer.
    """
    from envgym.agents.tiny import corpus, train_tokenizer
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    rng = np.random.default_rng(1)
    texts = list(corpus(include_envs=False)) + [
        m["content"] for s in range(200) for m in scripted_episode(s, rng)]
    tok = train_tokenizer(texts, 4096)
    tok.add_tokens([CALL_HEAD, CALL_MID, CALL_TAIL])
    config = Qwen2Config(
        vocab_size=len(tok), hidden_size=192, intermediate_size=512, num_hidden_layers=4,
        num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=8192,
        tie_word_embeddings=True, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        bos_token_id=tok.convert_tokens_to_ids("<|endoftext|>"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id,
                                               pad_token_id=config.pad_token_id)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def encode(tok, msgs) -> tuple[list[int], list[int]]:
    """ChatML ids and a mask of the assistant contents plus their end token."""
    ids, mask = [], []
    for m in msgs:
        head = tok.encode(f"<|im_start|>{m['role']}\n", add_special_tokens=False)
        body = tok.encode(m["content"] + "<|im_end|>", add_special_tokens=False)
        tail = tok.encode("\n", add_special_tokens=False)
        ids += head + body + tail
        mask += [0] * len(head) + [int(m["role"] == "assistant")] * len(body) + [0] * len(tail)
    return ids, mask


def warm_start(model_dir: Path, steps: int = 160, batch: int = 8, device: str = "cpu") -> None:
    """Teach the tiny model the tool-call format so that both loops really call tools."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device)
    big = model.config.hidden_size > 256  # a real-sized model: a real-sized learning rate
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4 if big else 3e-3)
    rng = np.random.default_rng(0)
    model.train()
    for step in range(steps):
        rows = [encode(tok, scripted_episode(int(rng.integers(1e6)), rng)) for _ in range(batch)]
        width = max(len(i) for i, _ in rows)
        ids = torch.tensor([i + [tok.pad_token_id] * (width - len(i)) for i, _ in rows])
        labels = torch.tensor([[t if k else -100 for t, k in zip(i, m, strict=True)]
                               + [-100] * (width - len(i)) for i, m in rows])
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16, enabled=device != "cpu"):
            loss = model(input_ids=ids.to(device), labels=labels.to(device)).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % 20 == 0 or step == steps - 1:
            print(f"warm start {step}: loss {loss.item():.3f}", file=sys.stderr, flush=True)
    model.save_pretrained(model_dir)
    (model_dir / "WARM_TOOL_START").write_text("ok\n")


# ---------------------------------------------------------------- the two sides

def envgym_run(model_dir: Path, steps: int, seed: int, budget: int) -> list[dict[str, float]]:
    """Per step: wall and CPU seconds, rollout seconds, sampled tokens, turns per episode."""
    from envgym.agents.config import load_config
    from envgym.agents.trainer import train

    out = Path(tempfile.mkdtemp(prefix="envgym-bench-"))
    cfg = load_config({
        "seed": seed, "output_dir": str(out), "steps": steps, "checkpoint_every": 0,
        "model": {"policy": str(model_dir), **device_settings(RUN["device"])["envgym"]},
        "envs": [{"id": ENV_ID, "train_seeds": [0, 100_000],
                  "eval_seeds": [100_000, 100_001]}],
        "rollout": {"group_size": GROUP, "tasks_per_step": PROMPTS, "max_turns": CALLS + 1,
                    "max_tokens": MAX_TOKENS, "temperature": 1.0, "eval_episodes": 1},
        "optim": {"lr": LR}, "ppo": {"kl_coef": 0.0, "loss_agg": "token_mean",
                                     "max_tokens_per_microbatch": budget},
        "log": {"tensorboard": False, "progress": False}})
    def calls() -> dict[str, float]:
        n, EXECUTED[0] = EXECUTED[0], 0
        return {"tool_calls": n / (PROMPTS * GROUP)}
    EXECUTED[0] = 0
    with envgym_clock(calls) as cpu:
        train(cfg, eval_at_start=False)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("step", 0) >= 1 and "time/step_s" in r]
    return [{"step_s": r["time/step_s"], "gen_s": r["time/rollout_s"],
             "step_cpu": c["gen_cpu"] + c["update_cpu"], "gen_cpu": c["gen_cpu"],
             "seq_tokens": r["throughput/tokens_per_s"] * r["time/step_s"],
             "tokens": r["action_tokens"] * PROMPTS * GROUP, "turns": r["turns"],
             "tool_rounds": r["turns"] - 1, "tool_calls": c["tool_calls"],
             "reward": r["reward"]}
            for r, c in zip(rows, cpu, strict=True)]


def trl_run(model_dir: Path, steps: int, seed: int, budget: int = 0) -> list[dict[str, float]]:
    """TRL's multi-turn loop; wrappers time generation and count the sampled tokens and the
    generations (turns) of each episode."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    seeds = list(range(seed * 10_000, seed * 10_000 + steps * PROMPTS))
    data = Dataset.from_dict({"prompt": [[{"role": "user", "content": task_text(s)}]
                                         for s in seeds], "seed": seeds})
    tok = AutoTokenizer.from_pretrained(model_dir)
    tok.chat_template = qwen2_5_chat_template
    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-bench-"),
        per_device_train_batch_size=PROMPTS * GROUP, num_generations=GROUP,
        max_completion_length=(CALLS + 1) * MAX_TOKENS + CALLS * 128,  # never cuts
        generation_kwargs={"max_new_tokens": MAX_TOKENS}, max_tool_calling_iterations=CALLS,
        max_steps=steps, learning_rate=LR, lr_scheduler_type="constant", warmup_steps=0,
        weight_decay=0.0, max_grad_norm=1.0, beta=0.0, epsilon=0.2, epsilon_high=0.28,
        loss_type="dapo", temperature=1.0, top_p=1.0, top_k=0,
        **device_settings(RUN["device"])["trl"],
        report_to="none", save_strategy="no", logging_steps=1, disable_tqdm=True, seed=seed,
        dataloader_num_workers=0, shuffle_dataset=False, gradient_checkpointing=False)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    trainer = GRPOTrainer(model=model, args=args, train_dataset=data, processing_class=tok,
                          environment_factory=AddToolTRL)
    single = trainer._generate_single_turn
    counts: list[tuple[int, int]] = []  # per generation call: rows, sampled tokens

    def counted_turn(*a, **k):
        out = single(*a, **k)
        counts.append((len(out[0]), sum(len(x) for x in out[0])))
        return out
    trainer._generate_single_turn = counted_turn
    record = trl_clock(trainer)
    per_step: list[list[tuple[int, int]]] = []

    class Split(TrainerCallback):  # the generation calls of each step
        def on_step_end(self, *a, **k):
            per_step.append(list(counts))
            counts.clear()
    trainer.add_callback(Split())
    with contextlib.redirect_stdout(sys.stderr):  # its per-step log dicts; stdout is ours
        trainer.train()
    trl_seq_tokens(trainer, record)
    logs = [h for h in trainer.state.log_history if "tools/call_frequency" in h]
    for r, h, calls in zip(record, logs, per_step, strict=False):
        r["tokens"] = float(sum(n for _, n in calls))
        r["turns"] = sum(rows for rows, _ in calls) / (PROMPTS * GROUP)
        r["tool_rounds"] = r["turns"] - 1
        r["tool_calls"] = h["tools/call_frequency"]
        r["reward"] = h.get("reward", float("nan"))
    return record


def prepare_model(tiny: str | None, shape: str = "tiny", device: str = "cpu") -> Path:
    model_dir = Path(tiny or tempfile.mkdtemp())
    if not (model_dir / "WARM_TOOL_START").exists():
        build_model(model_dir)
        reshape(model_dir, shape)
        warm_start(model_dir, device=device)
    return model_dir


EXTRA = ("turns", "tool_rounds", "tool_calls", "reward")


def main() -> None:
    global SYSTEM
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads, both sides")
    parser.add_argument("--tiny", help="warm-started tiny model dir (built there when new)")
    parser.add_argument("--shape", default="tiny", choices=["tiny", "qwen0.5b"],
                        help="model shape (qwen0.5b: random weights, for a GPU)")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda (bf16 on both sides)")
    parser.add_argument("--peak-tflops", type=float, default=790.0,
                        help="the device's peak bf16 TFLOP/s, for MFU (H200: ~790 measured)")
    parser.add_argument("--max-tokens-per-microbatch", type=int, default=16384,
                        help="envgym's packed update budget; 0: padded rows")
    parser.add_argument("--envgym-only", action="store_true",
                        help="time envgym alone (where TRL cannot be installed)")
    args = parser.parse_args()
    try:
        import trl
    except ImportError:
        if not args.envgym_only:
            raise SystemExit("bench/multiturn_vs_trl.py needs TRL: pip install 'envgym[trl]' "
                             "(or --envgym-only)") from None
        trl = None
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", FutureWarning)
    SYSTEM = tools_system()
    RUN["device"] = args.device
    model_dir = prepare_model(args.tiny, args.shape, args.device)
    n_params = parameters(model_dir)
    runs: dict[str, list[dict[str, float]]] = {"envgym": [], "trl": []}
    for r in range(args.rounds):  # A B A B: load drifts hit both sides alike
        for name, run in (("envgym", envgym_run), ("trl", trl_run))[:1 if trl is None else 2]:
            steps = run(model_dir, args.steps + args.warmup, seed=r,
                        budget=args.max_tokens_per_microbatch)
            runs[name] += steps[args.warmup:]
            print(json.dumps({"bench": "multiturn_vs_trl_run", "side": name, "round": r,
                              **summary(steps[args.warmup:], EXTRA)}),
                  file=sys.stderr, flush=True)
    if trl is None:
        ours = summary(runs["envgym"], EXTRA)
        print(json.dumps({"bench": "multiturn_vs_trl", "trl_version": None, "device": args.device,
                          "shape": args.shape, "parameters": n_params,
                          "mfu": {"envgym": round(mfu(ours.get("seq_tokens_per_s", 0.0),
                                                      n_params, args.peak_tflops), 5)},
                          "envgym": ours, "verdict": "TRL not installed: envgym alone"}))
        return
    ours, theirs = summary(runs["envgym"], EXTRA), summary(runs["trl"], EXTRA)
    ratio = theirs["median_step_s"] / ours["median_step_s"]  # equal episodes a step
    cpu_ratio = theirs["median_step_cpu_s"] / ours["median_step_cpu_s"]  # decides the goal
    print(json.dumps({
        "bench": "multiturn_vs_trl", "trl_version": trl.__version__, "prompts": PROMPTS,
        "group": GROUP, "max_tokens_per_turn": MAX_TOKENS, "tool_calls_max": CALLS,
        "generations_per_episode_max": CALLS + 1, "steps_per_run": args.steps,
        "rounds": args.rounds, "threads": args.threads,
        "max_tokens_per_microbatch": args.max_tokens_per_microbatch,
        "turns_per_episode": {"envgym": ours["turns"], "trl": theirs["turns"]},
        "device": args.device, "shape": args.shape, "parameters": n_params,
        "mfu": {side: round(mfu(x.get("seq_tokens_per_s", 0.0), n_params, args.peak_tflops), 5)
                for side, x in (("envgym", ours), ("trl", theirs))},
        "envgym": ours, "trl": theirs, **ratios(ours, theirs),
        "goal": ">= 2 in episodes per CPU second (equal episodes a step)",
        "meets_goal": cpu_ratio >= 2,
        "verdict": (f"envgym runs {cpu_ratio:.2f}x TRL's episodes per CPU second "
                    f"({ratio:.2f}x per wall second)") if cpu_ratio >= 1
                   else f"envgym is SLOWER than TRL: {cpu_ratio:.2f}x its episodes per CPU "
                        "second"}))


if __name__ == "__main__":
    main()
