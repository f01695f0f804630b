"""The wheel carries benchkit's data: the repository's top-level `conf/`, `templates/` and
`fixtures/` go into the package as `benchkit/_data/` at build time (benchkit.paths finds them
there), so an installed benchkit runs from any folder; the report's translation catalogs are
compiled there too. The repository keeps them where they
are; an editable install reads them from the checkout. Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
DATA_DIRS = ("conf", "templates", "fixtures")  # benchkit.paths.DATA_DIRS


class BuildPyWithData(build_py):
    """build_py, then the data folders copied into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads conf/, templates/, fixtures/ in the checkout
        dest = Path(self.build_lib) / "benchkit" / "_data"
        for name in DATA_DIRS:
            src = HERE / name
            if not (src / ".").is_dir():
                raise SystemExit(f"setup.py: {src} is missing; the wheel needs it")
            shutil.rmtree(dest / name, ignore_errors=True)
            shutil.copytree(
                src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.py[co]")
            )
        # The translations compiled (.po -> .mo, Babel), so an installed report reads them
        # without compiling each catalog at every start.
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in (Path(self.build_lib) / "benchkit" / "locale").glob("*/LC_MESSAGES/*.po"):
            with po.open("rb") as f:
                messages = read_po(f, locale=po.parent.parent.name)
            with po.with_suffix(".mo").open("wb") as f:
                write_mo(f, messages, use_fuzzy=False)


setup(cmdclass={"build_py": BuildPyWithData})
