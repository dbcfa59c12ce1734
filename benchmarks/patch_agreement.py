"""Does the hunk checker agree with `git apply --check`? Figures per patch and release.

    python benchmarks/patch_agreement.py CONSUMER TREE [TREE ...]

CONSUMER is a consumer checkout; each TREE a folder holding `sglang/` (an unpacked
release from driftaudit's cache, e.g. ~/.cache/driftaudit/sources/sglang-0.5.23).
For every sglang patch in the consumer and every tree it prints the hunks in total,
those that apply and fail by driftaudit's checker, and how many verdicts agree with
git's: same verdict and, where it applies, the same line (git runs on a scratch copy
of the touched files, laid out as the patch wants).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from driftaudit.match.patches import check_file  # noqa: E402
from driftaudit.usage.patch_files import collect_patches  # noqa: E402
from tests.gitapply import git_verdicts  # noqa: E402


def main(argv: list[str]) -> int:
    consumer, trees = Path(argv[0]), [Path(a) for a in argv[1:]]
    found = collect_patches(consumer)
    print(f"{'patch':60} {'tree':16} {'hunks':>5} {'apply':>5} {'fail':>5} {'agree':>5}")
    for patch in found.patches:
        for tree in trees:
            ours = {
                (file.written, result.hunk.line): result.at
                for file in patch.files
                for result in check_file(file, tree)
            }
            git = git_verdicts(consumer / patch.path, patch, tree)
            agree = sum(ours[key] == git[key] for key in ours)
            applying = sum(at is not None for at in ours.values())
            print(
                f"{patch.path:60} {tree.name:16} {len(ours):5} {applying:5} "
                f"{len(ours) - applying:5} {agree:5}"
            )
            for key in sorted(k for k in ours if ours[k] != git[k]):
                print(f"    disagree: {key[0]} hunk at patch line {key[1]}: "
                      f"driftaudit at {ours[key]}, git at {git[key]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
