"""Policy backends: `hf` (transformers), `openai` (HTTP), `vllm` (in-process), and the
OpenAI-compatible `server` over any of them. Load them through `envgym.policy.load_policy`."""
