"""A claim the ledger checks ("claim:<premise>"): its status, said as the report says it.
Claims are checked by `benchkit.report.analysis.claims`, not computed here."""

from __future__ import annotations

from typing import Any

from benchkit.report.lang.i18n import claim_status
from benchkit.report.verdicts.kind import VerdictKind
from benchkit.report.verdicts.light import Light


def _value(value: Any, lang: str, numbers: Light) -> str:
    return claim_status(str(value), lang)


KIND: VerdictKind = VerdictKind("claim:", prefix=True, value_text=_value)
