#!/usr/bin/env bash
# The main job, offline: build an index of two real contracts and ask it questions.
# Usage: examples/demo.sh [INDEX_DIR]   (default: ./demo-index, recreated each run)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
idx="${1:-demo-index}"
# The console script, or the module when the scripts folder is not on PATH (e.g. pyenv before a rehash).
if command -v hti-git >/dev/null 2>&1; then hti() { hti-git "$@"; }; else hti() { python3 -m hti_git "$@"; }; fi
rm -rf "$idx"
hti init "$idx"
hti -C "$idx" compile "$here/contracts/slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt" \
                          "$here/contracts/alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf"
hti -C "$idx" ls
hti -C "$idx" ask --doc slingerbaginc-05-27-2020-ex-10-7-consulting-agreement \
        "Which state's law governs this agreement?"
hti -C "$idx" ask "When does the agency agreement expire?"
echo
echo "Index written to $idx/ (a Git repository: try 'git -C $idx log --stat')."
