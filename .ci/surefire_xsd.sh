#!/usr/bin/env bash
# Prints the path of Maven Surefire's published test-report schema (surefire-test-report.xsd), which
# tests/reports/test_junit.py validates `agentassay report --junit` output against.
#
# The schema is not committed (a third-party file); it is taken from Debian's source tarball of
# surefire 2.22.3, the one Debian ships (the archive is reachable from CI, GitHub is not). Both the
# tarball and the XSD are pinned by sha256. Idempotent: nothing is downloaded when
# .ci/cache/surefire-test-report.xsd is there with the right hash. Only the path goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

TARBALL=surefire_2.22.3.orig.tar.xz
URLS=(
    "https://deb.debian.org/debian/pool/main/s/surefire/$TARBALL"
    "http://deb.debian.org/debian/pool/main/s/surefire/$TARBALL"
)
TARBALL_SHA256=74ffaf8499e8d4dd06c9fb954cb93c15763a70e8860f6b8381953d2e66506c8c
MEMBER=maven-surefire-surefire-2.22.3/maven-surefire-plugin/src/site/resources/xsd/surefire-test-report.xsd
XSD_SHA256=8b555f294b1995724da26982cf970520f19f8fdf5a9fcd12dab58f6ddec6ab23
OUT=.ci/cache/surefire-test-report.xsd

sha_ok() { [ -f "$2" ] && echo "$1  $2" | sha256sum --check --status -; }

if sha_ok "$XSD_SHA256" "$OUT"; then
    echo "$PWD/$OUT"
    exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for url in "${URLS[@]}"; do
    echo "surefire_xsd.sh: downloading $url" >&2
    if curl -fsSL --retry 5 --retry-delay 2 --retry-all-errors --connect-timeout 20 --max-time 300 \
        -o "$tmp/$TARBALL" "$url" && sha_ok "$TARBALL_SHA256" "$tmp/$TARBALL"; then
        break
    fi
    rm -f "$tmp/$TARBALL"
done
if ! sha_ok "$TARBALL_SHA256" "$tmp/$TARBALL"; then
    echo "surefire_xsd.sh: could not download $TARBALL with sha256 $TARBALL_SHA256" >&2
    exit 1
fi

tar -xJf "$tmp/$TARBALL" -C "$tmp" "$MEMBER"
if ! sha_ok "$XSD_SHA256" "$tmp/$MEMBER"; then
    echo "surefire_xsd.sh: $MEMBER in $TARBALL does not have sha256 $XSD_SHA256" >&2
    exit 1
fi
mkdir -p "$(dirname "$OUT")"
cp "$tmp/$MEMBER" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"  # atomic: a concurrent reader sees the old file or the whole new one
echo "$PWD/$OUT"
