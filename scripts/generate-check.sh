#!/usr/bin/env bash
# generate-check.sh fails when `make generate` changed a committed generated file or produced a
# generated file that is not committed. Generated files are recognised by Go's standard header
# ("// Code generated ... DO NOT EDIT"), so other work in progress in the tree does not count.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
marker='^// Code generated .*DO NOT EDIT'

mapfile -t tracked < <(git grep --cached -l -E "$marker" -- '*.go' || true)
# Generated documents (docs/configuration.md from e2e/cmd/envdoc, the AsyncAPI documents from
# scripts/gen-proto.sh) are checked the same way.
tracked+=(docs/configuration.md proto-events/asyncapi)
status=0
if ((${#tracked[@]} > 0)); then
	if ! git diff --exit-code --stat -- "${tracked[@]}"; then
		echo "generate-check: generated files differ from what is committed; run make generate and commit" >&2
		git diff -- "${tracked[@]}" | head -n 60 >&2
		status=1
	fi
fi

mapfile -t untracked < <(git ls-files --others --exclude-standard -- '*.go' | while read -r f; do
	grep -l -E "$marker" "$f" 2>/dev/null || true
done; git ls-files --others --exclude-standard -- proto-events/asyncapi)
if ((${#untracked[@]} > 0)); then
	echo "generate-check: generated files that are not committed:" >&2
	printf '  %s\n' "${untracked[@]}" >&2
	status=1
fi

((status == 0)) && echo "generate-check: ${#tracked[@]} generated files are up to date"
exit "$status"
