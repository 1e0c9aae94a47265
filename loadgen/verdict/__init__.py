"""Verdicts on a finished run: gates for CI and a report for people.

Owns: the thresholds file (`thresholds`), the checks (`checks`) and ``loadgen gate``
(`gate`) with its text, JUnit and Markdown outputs (`formats`), the reading of a results file
(`analysis`), the diagnosis of the heat with AWS's remedies (`diagnosis`), the verdict per
access pattern of a design run (`patterns`) and why a pattern's load was not delivered
(`delivery`), what the target said of each refusal
(`reasons`: throttles by reason and cause, errors with their messages), the demand a run was
asked to carry and whether it served it (`launch`), its cost (`cost`), designs side by side
(`compare`), the end of a run's printed summary (`summary`), and the HTML report with its
charts (`report`, `charts`). Reads results files only: imports `loadgen.model`,
`loadgen.pricing`, `loadgen.refusals`, `loadgen.errors` and `loadgen.configfile`; never a
client, the emulator or Locust.
"""
