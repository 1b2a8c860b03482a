"""Overlays for agent tasks: ``confgate run``.

They sit above the gate: each iteration asks an agent for work and then runs the real gate
(``pytest --confgate``) on the working tree, so the stages never import this package.

- ``runner``: one task end to end (prompts, iterations, subtasks, roles, escalation, Ctrl-C);
- ``gate_step``: the gate as a subprocess, its report loaded back;
- ``confidence_loop``: the loop's advisory score and the evidence fed back to the agent;
- ``paired``: the challenger's prompt, its answer parsed, the ``pair_session`` record;
- ``resume``: where an escalated run goes on after a human's decision (``--resume``);
- ``run_record``: the run directory ``.confgate/runs/<run-id>/`` and the ``--report`` JSON;
- ``lock``: content hashes of approved artifacts, and changes to them found later;
- ``exit_conditions``: a compiled CEL condition evaluated over one iteration's evidence;
- ``tasks``: a task's prompt (text or file) and the agents to preflight.
"""
