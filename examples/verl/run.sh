#!/usr/bin/env bash
# Train an envgym environment with verl (FSDP learner + vLLM rollouts) on one or N nodes.
#
#   ENV=search  bash examples/verl/run.sh                 # Search-v0, 1 node x 8 GPUs
#   ENV=code    bash examples/verl/run.sh                 # CodeRefine-v0
#   NNODES=4    bash examples/verl/run.sh                 # N nodes: start Ray first
#                                                         # (ray start --head / --address)
# Needs: pip install 'envgym[verl]' vllm on every node; MODEL a local HF directory.
set -euo pipefail
ENV=${ENV:-search}
MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
NNODES=${NNODES:-1}
GPUS=${GPUS:-8}
DATA=${DATA:-data/verl_$ENV}
case "$ENV" in
  search) ENV_ID=envgym/Search-v0;      ADV=envgym_turn; ENV_ARGS=(--env-arg protocol=search_r1) ;;
  code)   ENV_ID=envgym/CodeRefine-v0;  ADV=envgym_grpo; ENV_ARGS=() ;;
  *) echo "ENV must be search or code" >&2; exit 2 ;;
esac
python -m envgym.integrations.verl.data --env "$ENV_ID" --seeds 0:8192 --out "$DATA/train.parquet" "${ENV_ARGS[@]}"
python -m envgym.integrations.verl.data --env "$ENV_ID" --seeds 1000000:1000512 --out "$DATA/val.parquet" "${ENV_ARGS[@]}"
HERE=$(cd "$(dirname "$0")" && pwd)
python -m envgym.integrations.verl.main \
  algorithm.adv_estimator=$ADV \
  data.train_files="$DATA/train.parquet" data.val_files="$DATA/val.parquet" \
  data.train_batch_size=256 data.max_prompt_length=2048 data.max_response_length=4096 \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.optim.lr=1e-6 actor_rollout_ref.actor.ppo_mini_batch_size=64 \
  actor_rollout_ref.actor.strategy=fsdp2 actor_rollout_ref.actor.use_kl_loss=true \
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.mode=async \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns=8 \
  actor_rollout_ref.rollout.agent.default_agent_loop=envgym \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$HERE/agent_loops.yaml" \
  trainer.nnodes="$NNODES" trainer.n_gpus_per_node="$GPUS" \
  trainer.total_epochs=1 trainer.project_name=envgym trainer.experiment_name="verl_$ENV" "$@"
