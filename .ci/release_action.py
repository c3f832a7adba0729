"""Point action.yml at a prebuilt image (``image: docker://IMAGE``) for a release commit.

On the default branch action.yml says ``image: Dockerfile``: the runner builds the image from the checkout on
every run, which is what the self-test of a change needs. A release is different: .github/workflows/release.yml
pushes the image once to ghcr.io, runs this script, commits the one-line change and moves the tag (vX.Y.Z and
vX) to that commit, so `uses: OWNER/agentassay@v1` pulls the image instead of building it (docs/action.md,
"Releases: the prebuilt image"). tests/integrations/github/test_release.py validates the rewritten file with
the GitHub Actions schema (check-jsonschema, the test extra), so .ci/run does on every change.

    python3 .ci/release_action.py ghcr.io/OWNER/agentassay:v1.2.3 [--action action.yml] [--out FILE]

Exit 0; 3 when IMAGE is not a lowercase ``registry/owner/name:tag`` reference or action.yml does not have
exactly one ``image: Dockerfile`` line under ``runs:`` (the message says which).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

IMAGE = re.compile(r"^[a-z0-9.-]+(?::[0-9]+)?(?:/[a-z0-9._-]+)+:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
LINE = re.compile(r"(?m)^(\s+)image:\s*['\"]?Dockerfile['\"]?\s*$")


def rewrite(text: str, image: str) -> str:
    """``text`` (an action.yml) with its ``image: Dockerfile`` line replaced by ``image: docker://image``."""
    if not IMAGE.match(image):
        raise ValueError(
            f"image {image!r}: expected a lowercase reference with a tag, e.g. ghcr.io/owner/agentassay:v1.2.3"
        )
    found = LINE.findall(text)
    if len(found) != 1:
        raise ValueError(f"expected exactly one 'image: Dockerfile' line under runs:, found {len(found)}")
    return LINE.sub(lambda m: f"{m[1]}image: docker://{image}", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image", help="the pushed image, e.g. ghcr.io/owner/agentassay:v1.2.3")
    parser.add_argument("--action", type=Path, default=Path("action.yml"), help="the action.yml to read")
    parser.add_argument("--out", type=Path, default=None, help="where to write it (default: in place)")
    args = parser.parse_args(argv)
    try:
        text = rewrite(args.action.read_text(encoding="utf-8"), args.image)
    except (OSError, ValueError) as exc:
        print(f"error: {args.action}: {exc}", file=sys.stderr)
        return 3
    (args.out or args.action).write_text(text, encoding="utf-8")
    print(f"{args.out or args.action}: runs.image = docker://{args.image}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
