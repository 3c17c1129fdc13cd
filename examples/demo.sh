#!/usr/bin/env bash
# The main job, offline: build an index of two real contracts and ask it questions.
# Usage: examples/demo.sh [INDEX_DIR]   (default: ./demo-index, recreated each run)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
idx="${1:-demo-index}"
rm -rf "$idx"
hti-git init "$idx"
hti-git -C "$idx" compile "$here/contracts/slingerbaginc-05-27-2020-ex-10-7-consulting-agreement.txt" \
                          "$here/contracts/alcostoresinc-12-14-2005-ex-10-26-agency-agreement.pdf"
hti-git -C "$idx" ls
hti-git -C "$idx" ask --doc slingerbaginc-05-27-2020-ex-10-7-consulting-agreement \
        "Which state's law governs this agreement?"
hti-git -C "$idx" ask "When does the agency agreement expire?"
echo
echo "Index written to $idx/ (a Git repository: try 'git -C $idx log --stat')."
