"""The configuration: one pydantic model tree, unknown keys rejected.

Import any configuration model from here; the tree is split by section::

    base        shared field types and ``ConfigModel`` (``extra="forbid"``)
    agents      ``agents:``            metrics   ``gate.metrics``, ``gate.confidence``
    gate        ``gate:`` and policy   tasks     ``tasks:`` and their overlays
    rank        ``rank:``              trust     ``trust:``
    schema      ``ConfgateConfig`` (the whole file) and ``cross_check`` (rules across keys)

Reading files lives beside the models: ``loader`` finds and parses the file and turns
validation errors into ``FILE:LINE: key.path: message`` lines (``key_path`` writes the key,
``yaml_text`` reads YAML, imported only for a YAML file); ``textfile`` reads a user's text
file with a size cap; ``expressions`` compiles CEL exit conditions at load time;
``seed_spelling`` maps the `confidence_calculation` block onto the model before validation.
"""

from __future__ import annotations

from pytest_confgate.config.agents import (
    AgentConfig,
    AnthropicAgentConfig,
    CommandAgentConfig,
    LlmAgentConfig,
    OpenAIAgentConfig,
)
from pytest_confgate.config.gate import (
    TIER_DEFAULTS,
    GateConfig,
    PolicyConfig,
    RiskRule,
    SignoffConfig,
    TierPolicy,
    Waiver,
)
from pytest_confgate.config.metrics import (
    DEFAULT_HARD_LIMITS,
    DEFAULT_JUDGE_CRITERIA,
    HARD_CONDITIONS,
    ChecklistMetricConfig,
    ConfidenceConfig,
    CoverageMetricConfig,
    HybridWeights,
    IntegrityMetricConfig,
    LintMetricConfig,
    LlmJudgeMetricConfig,
    LlmSettings,
    MetricConfig,
    PassRateMetricConfig,
    RequirementMetricConfig,
    SecurityMetricConfig,
    default_metrics,
)
from pytest_confgate.config.rank import RankConfig
from pytest_confgate.config.schema import (
    JUDGE_NEEDS_EVALUATOR,
    JUDGE_NOT_AUTHOR,
    ConfgateConfig,
    cross_check,
)
from pytest_confgate.config.tasks import (
    ConfidenceLoopConfig,
    KeyPath,
    OverlaysConfig,
    PairedWorkflowConfig,
    TaskConfig,
)
from pytest_confgate.config.trust import TrustConfig

__all__ = [
    "DEFAULT_HARD_LIMITS",
    "DEFAULT_JUDGE_CRITERIA",
    "HARD_CONDITIONS",
    "JUDGE_NEEDS_EVALUATOR",
    "JUDGE_NOT_AUTHOR",
    "TIER_DEFAULTS",
    "AgentConfig",
    "AnthropicAgentConfig",
    "ChecklistMetricConfig",
    "CommandAgentConfig",
    "ConfgateConfig",
    "ConfidenceConfig",
    "ConfidenceLoopConfig",
    "CoverageMetricConfig",
    "GateConfig",
    "HybridWeights",
    "IntegrityMetricConfig",
    "KeyPath",
    "LintMetricConfig",
    "LlmAgentConfig",
    "LlmJudgeMetricConfig",
    "LlmSettings",
    "MetricConfig",
    "OpenAIAgentConfig",
    "OverlaysConfig",
    "PairedWorkflowConfig",
    "PassRateMetricConfig",
    "PolicyConfig",
    "RankConfig",
    "RequirementMetricConfig",
    "RiskRule",
    "SecurityMetricConfig",
    "SignoffConfig",
    "TaskConfig",
    "TierPolicy",
    "TrustConfig",
    "Waiver",
    "cross_check",
    "default_metrics",
]
