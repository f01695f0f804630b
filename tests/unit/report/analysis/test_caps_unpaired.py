"""Capped calls compared only where a peer made the same call (benchkit/report/analysis/caps.py): a
raced sweep measures a point with more slots on more units, so its capped calls in units the
others never ran say nothing about the setting."""

from __future__ import annotations

from benchkit.report.analysis.caps import differing, job_caps


def _call(unit: str, seq: int, tokens: int, cap: int = 256) -> dict[str, object]:
    return {
        "ok": True,
        "unit": unit,
        "seq": seq,
        "completion_tokens": tokens,
        "cap": cap,
        "finish_reason": "length" if tokens >= cap else "stop",
        "t_sent": 0.0,
        "t_done": 1.0,
    }


def test_a_capped_call_no_peer_made_is_not_counted_against_the_point() -> None:
    # 16 slots ran units u000-u015 and capped a call in u009; 1 slot ran u000-u002 only.
    wide = job_caps("16", [_call(f"u{i:03d}", 0, 256 if i == 9 else 40) for i in range(16)])
    narrow = job_caps("1", [_call(f"u{i:03d}", 0, 40) for i in range(3)])
    d = differing(wide, [narrow])
    assert d.keys == [] and d.common == []


def test_a_capped_call_a_peer_stopped_short_of_still_counts() -> None:
    wide = job_caps("16", [_call(f"u{i:03d}", 0, 256 if i == 1 else 40) for i in range(16)])
    narrow = job_caps("1", [_call(f"u{i:03d}", 0, 40) for i in range(3)])
    assert differing(wide, [narrow]).keys == ["u001/0"]
    # And where the peer capped it too, it is the workload's, alike.
    alike = job_caps("2", [_call(f"u{i:03d}", 0, 256 if i == 1 else 40) for i in range(3)])
    d = differing(wide, [narrow, alike])
    assert d.keys == ["u001/0"]
    assert differing(wide, [alike]).common == ["u001/0"]
