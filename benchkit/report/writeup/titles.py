"""The title and question of a study that declares none, from what ran: the model, where it
ran and the factors swept (a fixed default title had named tiny-moe on the CPU for every
model, and asked about parallel slots for an MTP or open-loop sweep)."""

from __future__ import annotations

from benchkit.report.lang import i18n, tr
from benchkit.report.verdicts.folder import Analysed


def composed(a: Analysed, lang: str) -> tuple[str, str]:
    """(title, question) from the results: '{model} on {where}: {factors}'."""
    complete = [r for r in a.results if r.status == "complete"] or list(a.results)
    models = {m.name for r in complete if (m := r.result.provenance.model) and m.name}
    model = " / ".join(sorted(models)) or tr(lang, "a model")
    where = _where(a, lang)
    factors = [i18n.factor_name(f, lang) for f in a.sweep.varying]
    objective = i18n.objective_words(a.sweep.metric, lang)
    if not factors:
        return (
            tr(lang, "{model} on {where}", model=model, where=where),
            tr(
                lang,
                "How does this setting do on {objective} for this workload?",
                objective=objective,
            ),
        )
    listed = i18n.list_text(factors, lang)
    return (
        tr(lang, "{model} on {where}: {factors}", model=model, where=where, factors=listed),
        tr(
            lang,
            "How do {factors} change {objective} for this workload?",
            factors=listed,
            objective=objective,
        ),
    )


def _where(a: Analysed, lang: str) -> str:
    backends = {str(r.factors.get("backend") or "") for r in a.results}
    if backends <= {"cpu", ""}:
        return tr(lang, "the CPU")
    names = sorted(
        {
            str(
                r.result.provenance.hardware.get("description")
                or r.result.provenance.hardware.get("name")
                or ""
            )
            for r in a.results
        }
        - {"", "local"}
    )
    return " / ".join(names) if names else tr(lang, "this machine's GPU")
