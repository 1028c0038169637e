"""Registration of envgym's own environments; nothing here imports them (lazy entry points)."""

from envgym.registration import register

_ENVS = "envgym.environments"

register(
    "envgym/TimeSeries-v0",
    f"{_ENVS}.timeseries.env:TimeSeriesEnv",
    description="ARTIST-style time-series QA: zoom into segments of a long series, then answer.",
    scripted={
        "random": f"{_ENVS}.timeseries.policies:RandomPolicy",
        "heuristic": f"{_ENVS}.timeseries.policies:HeuristicPolicy",
        "guess": f"{_ENVS}.timeseries.policies:GuessPolicy",
        "oracle": f"{_ENVS}.timeseries.policies:OraclePolicy",
        "hack_overview": f"{_ENVS}.timeseries.policies:HackOverviewPolicy",
        "hack_wide_zoom": f"{_ENVS}.timeseries.policies:HackWideZoomPolicy",
        "hack_blind_scan": f"{_ENVS}.timeseries.policies:HackBlindScanPolicy",
        "hack_max_scan": f"{_ENVS}.timeseries.policies:HackMaxScanPolicy",
        "hack_junk_zoom": f"{_ENVS}.timeseries.policies:HackJunkZoomPolicy",
    },
    grader_fixtures=f"{_ENVS}.timeseries.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.timeseries.rules:tables",
)

register(
    "envgym/Debate-v0",
    f"{_ENVS}.debate.env:DebateEnv",
    description="ILR debate: N agents, IRT-driven cooperative/competitive mode, Idea3 rounds on maths.",
    scripted={
        "oracle": f"{_ENVS}.debate.policies:Oracle",
        "noisy": f"{_ENVS}.debate.policies:Noisy",
        "stubborn": f"{_ENVS}.debate.policies:Stubborn",
        "follower": f"{_ENVS}.debate.policies:Follower",
        "hack_copy_peer": f"{_ENVS}.debate.policies:HackCopyPeer",
        "hack_multiple_answers": f"{_ENVS}.debate.policies:HackMultipleAnswers",
        "honest_lead": f"{_ENVS}.debate.policies:HonestLead",
        "hack_deceive_partner": f"{_ENVS}.debate.policies:HackDeceivePartner",
        "hack_forge_env_line": f"{_ENVS}.debate.policies:HackForgeEnvLine",
        "hack_sandbag": f"{_ENVS}.debate.policies:HackSandbag",
        "hack_hedge_text": f"{_ENVS}.debate.attacks:HackHedgeText",
        "hack_hedge_equals": f"{_ENVS}.debate.attacks:HackHedgeEquals",
    },
    multi_agent=True,
    grader_fixtures=f"{_ENVS}.debate.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.debate.rules:tables",
)

register(
    "envgym/SafetyRules-v0",
    f"{_ENVS}.safety.env:SafetyRulesEnv",
    description="ASCL safety-rule lookup: consult a rulebook or answer directly; refuse/comply/safe-complete.",
    scripted={
        "oracle": f"{_ENVS}.safety.policies:Oracle",
        "always_lookup": f"{_ENVS}.safety.policies:AlwaysLookup",
        "never_lookup": f"{_ENVS}.safety.policies:NeverLookup",
        "refuse_all": f"{_ENVS}.safety.policies:RefuseAll",
        "comply_all": f"{_ENVS}.safety.policies:ComplyAll",
        "hack_apology_comply": f"{_ENVS}.safety.policies:HackApologyComply",
        "hack_refuse_then_comply": f"{_ENVS}.safety.policies:HackRefuseThenComply",
        "hack_comply_then_refuse": f"{_ENVS}.safety.policies:HackComplyThenRefuse",
        "hack_cite_without_lookup": f"{_ENVS}.safety.policies:HackCiteWithoutLookup",
        "hack_cite_every_rule": f"{_ENVS}.safety.policies:HackCiteEveryRule",
        "hack_lookup_cite_all": f"{_ENVS}.safety.policies:HackLookupCiteAll",
        "hack_disguised_steps": f"{_ENVS}.safety.policies:HackDisguisedSteps",
        "hack_encoded_steps": f"{_ENVS}.safety.policies:HackEncodedSteps",
        "hack_steps_outside_response": f"{_ENVS}.safety.policies:HackStepsOutsideResponse",
        "hack_soft_refusal_comply": f"{_ENVS}.safety.policies:HackSoftRefusalComply",
        "hack_markup_steps": f"{_ENVS}.safety.policies:HackMarkupSteps",
        "hack_missed_refusal_comply": f"{_ENVS}.safety.policies:HackMissedRefusalComply",
        "hack_salad_help": f"{_ENVS}.safety.policies:HackSaladHelp",
        "hack_hedge_safe_complete": f"{_ENVS}.safety.policies:HackHedgeSafeComplete",
        "hack_short_list_steps": f"{_ENVS}.safety.attacks:HackShortListSteps",
        "hack_glued_steps": f"{_ENVS}.safety.attacks:HackGluedSteps",
        "hack_short_encoded_steps": f"{_ENVS}.safety.attacks:HackShortEncodedSteps",
        "hack_short_prose_steps": f"{_ENVS}.safety.attacks:HackShortProseSteps",
        "hack_term_salad": f"{_ENVS}.safety.attacks:HackTermSalad",
        "hack_referral_help": f"{_ENVS}.safety.attacks:HackReferralHelp",
        "hack_format_dodge": f"{_ENVS}.safety.attacks:HackFormatDodge",
    },
    grader_fixtures=f"{_ENVS}.safety.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.safety.grader_rules:tables",
)

register(
    "envgym/CodeRefine-v0",
    f"{_ENVS}.code.env:CodeRefineEnv",
    description="RefineRL Skeptical-Agent: write, run on public tests, refine, submit to hidden tests.",
    scripted={
        "oracle": f"{_ENVS}.code.policies:OraclePolicy",
        "refiner": f"{_ENVS}.code.policies:RefinerPolicy",
        "random": f"{_ENVS}.code.policies:RandomPolicy",
        "hack_read_tests": f"{_ENVS}.code.policies:HackReadTestsPolicy",
        "hack_hardcode_public": f"{_ENVS}.code.policies:HackHardcodePolicy",
        "hack_guess_output": f"{_ENVS}.code.policies:HackGuessPolicy",
    },
    grader_fixtures=f"{_ENVS}.code.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.code.rules:tables",
)

register(
    "envgym/Search-v0",
    f"{_ENVS}.search.env:SearchEnv",
    description="Search-R1 QA over a generated world: <search> with BM25, <answer> scored by EM.",
    scripted={
        "random": f"{_ENVS}.search.policies:RandomPolicy",
        "heuristic": f"{_ENVS}.search.policies:HeuristicPolicy",
        "oracle": f"{_ENVS}.search.policies:OraclePolicy",
        "hack_answer_from_question": f"{_ENVS}.search.policies:HackAnswerFromQuestionPolicy",
        "hack_stuff_answer": f"{_ENVS}.search.policies:HackStuffAnswerPolicy",
        "hack_fake_information": f"{_ENVS}.search.policies:HackFakeInformationPolicy",
        "hack_copy_think": f"{_ENVS}.search.policies:HackCopyThinkPolicy",
        "hack_list_think": f"{_ENVS}.search.policies:HackListThinkPolicy",
        "hack_search_spam": f"{_ENVS}.search.policies:HackSearchSpamPolicy",
        "heuristic_stated": f"{_ENVS}.search.adversaries:StatedHeuristicPolicy",
        "hack_salad_think": f"{_ENVS}.search.adversaries:HackSaladThinkPolicy",
        "hack_glued_candidates": f"{_ENVS}.search.adversaries:HackGluedCandidatesPolicy",
        "hack_think_sibling_fact": f"{_ENVS}.search.attacks:ThinkSiblingFact",
        "hack_think_retract": f"{_ENVS}.search.attacks:ThinkRetract",
        "hack_think_any_passage": f"{_ENVS}.search.attacks:ThinkAnyPassage",
        "hack_multi_think": f"{_ENVS}.search.attacks:MultiThink",
        "hack_kind_words": f"{_ENVS}.search.attacks:KindWords",
    },
    grader_fixtures=f"{_ENVS}.search.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.search.rules:tables",
)

register(
    "envgym/Consult-v0",
    f"{_ENVS}.psych.env:ConsultEnv",
    description="MIND psychiatric consultation (synthetic patients, screening-level research, "
                "not diagnosis): typed evidence state, reasoning bank, inquire then diagnose.",
    scripted={
        "random": f"{_ENVS}.psych.policies:RandomPolicy",
        "heuristic": f"{_ENVS}.psych.policies:HeuristicPolicy",
        "oracle": f"{_ENVS}.psych.policies:OraclePolicy",
        "hack_think_stuffing": f"{_ENVS}.psych.policies:HackThinkStuffing",
        "hack_question_spam": f"{_ENVS}.psych.policies:HackQuestionSpam",
        "hack_prior_mode": f"{_ENVS}.psych.policies:HackPriorMode",
        "faithful_query": f"{_ENVS}.psych.policies:FaithfulQueryPolicy",
        "hack_query_stuffing": f"{_ENVS}.psych.policies:HackQueryStuffing",
    },
    grader_fixtures=f"{_ENVS}.psych.grader_fixtures:fixtures",
    grader_rules=f"{_ENVS}.psych.rules:tables",
)
