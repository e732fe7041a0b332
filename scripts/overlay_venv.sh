#!/usr/bin/env bash
# Development aid: an environment in DIR whose torch tree (and so torch._C) is its own,
# while every other package comes from .venv. Lets several builds be tested side by side.
#   scripts/overlay_venv.sh build/mywork        # then: TN_BUILD_DIR=build/mywork \
#                                               #   build/mywork/venv/bin/python scripts/build.py
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=$1
[ -x .venv/bin/python ] || { echo "run scripts/setup.sh first" >&2; exit 1; }
python3 -m venv "$DIR/venv"
SITE=$("$DIR/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
MAIN=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
.venv/bin/python scripts/vendor.py "$(ls build/wheels/torch-2.13.0*.whl | head -1)" "$SITE"
cp "$MAIN/torchnative-src.pth" "$SITE/"
echo "$MAIN" > "$SITE/zz-main-venv.pth"
ln -sf "$MAIN/../../../bin/ninja" "$DIR/venv/bin/ninja" 2>/dev/null || true
echo "overlay environment ready: $DIR/venv"
