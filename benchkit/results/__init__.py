"""result.json and the folders around it, taken as anyone's: its shape (`schema`), its one
writer and loader (`store`), whether a result read is what benchkit measured (`trust`), every
read bounded (`bounded`), reuse, owned folders, secrets scrubbed, control characters shown.

`frame` is the results' Python API (the report points to it: `benchkit.results.frame(folder)`).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def frame(folder: str | Path) -> pd.DataFrame:
    """The results of a run or sweep folder as a pandas DataFrame: the table of results.csv
    (`store.result_rows` says what a row is), parsed the same way, so the two always agree.

        import benchkit.results
        df = benchkit.results.frame("outputs/sweeps/2026-12-03/10-00-00")
        df[df["pass"].isna()].pivot_table("s_per_unit_throughput", "factor.slots", "factor.backend")
    """
    # Imported here: a job process loads this package and never needs pandas.
    import pandas as pd

    from benchkit.results.store import find_results, results_csv

    text = results_csv(find_results(Path(folder)))
    return pd.read_csv(io.StringIO(text), dtype={"pass": "Int64", "job": str, "reason": str})
