"""The build verdict's words: its headline clause and its sentence."""

from __future__ import annotations

from functools import partial

from benchkit.report.analysis.numbers import BuildNumbers, BuildPair, of
from benchkit.report.lang import fmt, tr, trc, trn
from benchkit.report.lang.i18n import effect_word, point_text
from benchkit.report.verdicts.common import Verdict
from benchkit.report.verdicts.kind import Clause
from benchkit.report.verdicts.reasons import _prov


def clauses(v: Verdict, lang: str) -> list[Clause]:
    """The headline's clause: the new build's effect, where the comparison gave one."""
    if v.verdict in ("faster", "slower", "no difference"):
        return [partial(_build_clause, v, lang)]
    return []


def _build_clause(v: Verdict, lang: str, rest: str | None) -> str:
    pct = fmt.pct(abs(of(BuildNumbers, v.numbers).median_change or 0))
    if v.verdict == "faster":
        if rest is None:
            return tr(lang, "the new build was {pct} faster", pct=pct)
        return tr(lang, "the new build was {pct} faster{rest}", pct=pct, rest=rest)
    if v.verdict == "slower":
        if rest is None:
            return tr(lang, "the new build was {pct} slower", pct=pct)
        return tr(lang, "the new build was {pct} slower{rest}", pct=pct, rest=rest)
    if rest is None:
        return tr(lang, "the new build made no difference")
    return tr(lang, "the new build made no difference{rest}", rest=rest)


def build_sentence(v: Verdict, lang: str) -> str:
    n = of(BuildNumbers, v.numbers)
    if v.verdict == "not comparable":
        why = ", ".join(f"{k}: {a} → {b}" for k, (a, b) in (n.blocked_by or {}).items())
        return tr(
            lang,
            "The two sweeps are not on the same basis, so they are not compared ({why}).",
            why=why,
        )
    if v.verdict is None:
        return tr(lang, "No configuration completed in both sweeps.")
    pairs = n.pairs
    # A verdict other than None means pairs, so a median change.
    pct = fmt.pct(abs(n.median_change or 0.0))
    if v.verdict == "faster":
        head = tr(lang, "The new build was {pct} faster", pct=pct)
    elif v.verdict == "slower":
        head = tr(lang, "The new build was {pct} slower", pct=pct)
    elif v.verdict == "mixed":
        head = tr(lang, "The change was mixed across settings")
    else:
        head = tr(lang, "No difference beyond the noise")
    detail = ""
    if len(pairs) == 1:
        detail = _pair_text(pairs[0], lang)
    elif n.change_range:
        lo, hi = n.change_range
        detail = trn(
            lang,
            " ({n} config, {lo} … {hi})",
            " ({n} configs, {lo} … {hi})",
            len(pairs),
            lo=fmt.signed_pct(lo),
            hi=fmt.signed_pct(hi),
        )
    return f"{head}{detail}{_prov(v, lang)}."


def _pair_text(p: BuildPair, lang: str) -> str:
    """The one configuration both builds ran: its time before and after, and its prefill and
    decode rates."""
    text = tr(
        lang,
        " ({config}: {base} → {new}, throughput basis)",
        config=point_text(p["config"], lang),
        base=fmt.seconds(p["base"], lang),
        new=fmt.seconds(p["new"], lang),
    )
    bits = []
    if p["base_prefill"] and p["new_prefill"]:
        bits.append(
            f"prefill {fmt.num(p['base_prefill'], 0)} → {fmt.num(p['new_prefill'], 0)} tok/s "
            f"({effect_word(p['prefill_effect'], lang)})"
        )
    if p["base_decode"] and p["new_decode"]:
        if p["decode_effect"] == "no difference":
            word = trc(lang, "decode rate", "unchanged")
        else:
            word = effect_word(p["decode_effect"], lang)
        bits.append(
            f"decode {fmt.num(p['base_decode'], 0)} → {fmt.num(p['new_decode'], 0)} tok/s ({word})"
        )
    if bits:
        text += "; " + ", ".join(bits)
    return text
