"""spectui bench: is speculation worth it on this machine, for these prompts?

prompts.py (the prompt set) -> protocol.py (configurations, warm-up, repeats, cold runs,
Ctrl+C) -> results.py (medians, the result document) -> verdict.py (best configuration,
pays off or not, causes) -> report.py (cells, JSON, CSV, Markdown); compare.py diffs two
results; memory.py samples the memory in use; launch/environment.py records what they were
measured on. See results.py for exactly what every median is over. Against llama-servers
with several slots, concurrency.py (bursts of c requests at once) -> concurrency_results.py
(per level, the verdict and break-even) -> concurrency_report.py (cells, Markdown, CSV).
"""
