"""Seed 003's confidence block and a template in its words, shared by the tests (issue 17)."""

SEED_BLOCK = """\
confidence_calculation:
  method: hybrid
  hybrid_settings:
    formula_weight: 0.60
    llm_weight: 0.40
  llm_settings:
    provider: openai
    model: gpt-4o-mini
    temperature: 0.1
    max_tokens: 100
    timeout_ms: 2000
  formula_weights:
    similarity: 0.80
    source_quality: 0.10
    response_length: 0.10
"""
"""The seed's block as written (its JSON as YAML)."""

SEED_TEMPLATE = """\
Evaluate confidence in the change.
Consider context quality, answer completeness, and potential gaps.
Task: {task}
Evidence: {metrics}
Change: {diff}
Return ONLY a number between 0 and 1.
"""
"""The seed's fallback prompt with our placeholders: it asks for a bare number."""
