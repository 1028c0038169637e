"""Psychiatric consultation environment with a typed evidence state (MIND), `envgym/Consult-v0`.

Screening-level decision support for research on agents, NOT diagnosis: every patient is
synthetic, the criteria bank is our own paraphrase of the structure of DSM-5-TR / ICD-11,
and nothing here should be used with real people.
"""
